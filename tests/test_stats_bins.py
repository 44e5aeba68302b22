"""Histogram bins of the statistics, checked against counts made by hand."""

from __future__ import annotations

from datetime import timedelta

import polars as pl
import pytest

from memory import banks, entries
from memory.clock import FixedClock
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import BankCreate, EntryIn
from memory.stats_bins import Bin, bin_values, histograms

DAY = timedelta(days=1)


def test_equal_width_bins_cover_min_to_max_and_count_every_value() -> None:
    found = bin_values(pl.Series([0.0, 1.0, 2.5, 9.9, 10.0]), bins=4)
    assert [(b.start, b.end) for b in found] == [(0, 2.5), (2.5, 5), (5, 7.5), (7.5, 10)]
    assert [b.count for b in found] == [2, 1, 0, 2]  # 10.0, the maximum, is in the last bin


def test_whole_numbers_in_a_narrow_range_get_one_bin_each_centred_on_it() -> None:
    found = bin_values(pl.Series([3, 3, 5, None]), bins=20, whole=True)
    assert found == [
        Bin(start=2.5, end=3.5, count=2),
        Bin(start=3.5, end=4.5, count=0),
        Bin(start=4.5, end=5.5, count=1),
    ]


def test_one_value_is_one_bin_and_no_value_is_no_bin() -> None:
    assert bin_values(pl.Series([2.0, 2.0]), bins=5) == [Bin(start=2, end=2, count=2)]
    assert bin_values(pl.Series([], dtype=pl.Float64)) == []


def test_bins_must_be_positive() -> None:
    with pytest.raises(InvalidInput, match="at least 1"):
        bin_values(pl.Series([1.0]), bins=0)


def test_histograms_of_a_bank_count_entries_in_the_time_frame(
    ctx: Context, clock: FixedClock
) -> None:
    bank = banks.create(ctx, BankCreate(name="b", type="conversation"))
    texts = {"k1": ["a", "a b", "a b c"], "k2": ["a b c d"], "old": ["a"]}
    ages = {"k1": [1, 2, 3], "k2": [10], "old": [40]}
    entries.write(
        ctx,
        bank,
        [
            EntryIn(key=key, speaker="ann", content=text, created_at=clock.now() - age * DAY)
            for key in texts
            for text, age in zip(texts[key], ages[key], strict=True)
        ],
    )
    found = histograms(ctx, bank, bins=3)
    # 1..4 tokens: four whole numbers in 3 bins of width 1, the last one closed
    assert [b.count for b in found.token_count] == [1, 1, 2]
    assert sum(b.count for b in found.entry_age_days) == 4  # the 40-day-old entry is outside
    assert found.entry_age_days[0].start == pytest.approx(1.0)
    assert found.entry_age_days[-1].end == pytest.approx(10.0)
    assert [b.count for b in found.entries_per_key] == [1, 0, 1]  # k2 has 1, k1 has 3
    assert histograms(ctx, bank, since=clock.now() - 50 * DAY).entries_per_key[0].count == 2
