"""Histogram bins of a bank's distributions (token count, entry age, entries per key), in polars.

The lab draws these as charts: the counting happens here, over the same projected scan and
time frame as `memory.stats`, so the browser receives a few bins, never the entries. The
marks drawn on the charts (avg, p95, min, max) come from `memory.stats.Stats`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import polars as pl
from pydantic import BaseModel

from memory.clock import days_before
from memory.errors import InvalidInput
from memory.models import Bank
from memory.stats import DAY_SECONDS, DEFAULT_DAYS

if TYPE_CHECKING:
    from memory.context import Context

DEFAULT_BINS = 20


class Bin(BaseModel):
    """One bar of a histogram: values in [start, end) (the last bin includes its end)."""

    start: float
    end: float
    count: int


class Histograms(BaseModel):
    """Equal-width bins of each distribution the statistics report, over one time frame."""

    token_count: list[Bin]
    entry_age_days: list[Bin]
    """Age at the time of computing, in days."""
    entries_per_key: list[Bin]


def bin_values(values: pl.Series, *, bins: int = DEFAULT_BINS, whole: bool = False) -> list[Bin]:
    """Return equal-width bins spanning min..max of `values` (nulls ignored; [] when empty).

    Args:
        values: the numbers to count.
        bins: how many bins at most.
        whole: the values are whole numbers: when their range is narrower than `bins`,
            use one bin per number, centred on it ([n - 0.5, n + 0.5)), so no bar mixes two
            values and a mark at n falls in the middle of n's bar.

    Raises:
        InvalidInput: bins is less than 1.
    """
    if bins < 1:
        raise InvalidInput(f"bins must be at least 1, got {bins}")
    clean = values.drop_nulls().cast(pl.Float64)
    if clean.is_empty():
        return []
    low, high = float(clean.min()), float(clean.max())  # type: ignore[arg-type]
    if whole and high - low + 1 <= bins:
        count = int(high - low) + 1
        tally = _tally((clean - low).round())
        return [
            Bin(start=low + i - 0.5, end=low + i + 0.5, count=tally.get(i, 0)) for i in range(count)
        ]
    if low == high:
        return [Bin(start=low, end=high, count=clean.len())]
    width = (high - low) / bins
    tally = _tally(((clean - low) / width).floor().clip(0, bins - 1))
    edges = [low + i * width for i in range(bins)] + [high]
    return [Bin(start=edges[i], end=edges[i + 1], count=tally.get(i, 0)) for i in range(bins)]


def _tally(index: pl.Series) -> dict[int, int]:
    """Return how many times each bin number occurs in `index`."""
    counted = index.cast(pl.Int64).value_counts()
    return {int(i): int(n) for i, n in counted.iter_rows()}


def histograms(
    ctx: Context,
    bank: Bank,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    bins: int = DEFAULT_BINS,
) -> Histograms:
    """Return the bank's histograms over [since, until) (default: the last 30 days).

    Raises:
        InvalidInput: bins is less than 1.
    """
    now = ctx.clock.now().astimezone(UTC)
    if since is None:
        since = days_before(until or now, DEFAULT_DAYS) or datetime.min.replace(tzinfo=UTC)
    table = ctx.store.entry_table(bank.id, fields=["key", "token_count", "created_at"])
    rows = pl.from_arrow(table)
    assert isinstance(rows, pl.DataFrame)
    created = pl.col("created_at")
    window = created >= since if until is None else (created >= since) & (created < until)
    frame = rows.filter(window)
    age = (pl.lit(now) - created).dt.total_microseconds() / 1e6 / DAY_SECONDS
    ages = frame.select(age.alias("age")).to_series()
    per_key = frame.group_by("key").len("n").get_column("n")
    return Histograms(
        token_count=bin_values(frame.get_column("token_count"), bins=bins, whole=True),
        entry_age_days=bin_values(ages, bins=bins),
        entries_per_key=bin_values(per_key, bins=bins, whole=True),
    )
