"""Statistics checked against values computed by hand on small fixture banks."""

from __future__ import annotations

import json
from datetime import timedelta
from functools import partial
from typing import Any

import pytest

from memory import banks, entries, stats
from memory.cli import main
from memory.clock import FixedClock
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import Bank, BankCreate, EntryIn
from memory.stats import Count, Distribution

DAY = timedelta(days=1)
CONTENT = {1: "a", 2: "a b", 3: "a b c", 4: "a b c d", 10: "a b c d e f g h i j"}
"""Texts with a known cl100k token count."""


def turn(
    clock: FixedClock, key: str, speaker: str | None, tokens: int, days_ago: float, tags: list[str]
) -> EntryIn:
    """Return an entry of `tokens` tokens written `days_ago` days before the clock's time."""
    return EntryIn(
        key=key,
        speaker=speaker,
        content=CONTENT[tokens],
        tags=tags,
        created_at=clock.now() - days_ago * DAY,
    )


@pytest.fixture
def conv(ctx: Context, clock: FixedClock) -> Bank:
    """A conversation bank: four entries in the last 30 days, one older, one deleted."""
    bank = banks.create(ctx, BankCreate(name="support", type="conversation"))
    written = entries.write(
        ctx,
        bank,
        [
            turn(clock, "k1", "ann", 1, 1, ["x"]),
            turn(clock, "k1", "bob", 2, 2, ["x", "y"]),
            turn(clock, "k1", "ann", 3, 3, []),
            turn(clock, "k2", "ann", 4, 10, ["y"]),
            turn(clock, "k3", "cy", 10, 40, ["old"]),
            turn(clock, "k4", "dee", 10, 5, ["deleted"]),
        ],
    )
    assert [e.token_count for e in written] == [1, 2, 3, 4, 10, 10]
    entries.forget(ctx, bank, written[5].id)
    return bank


def dist(avg: float, p95: float, low: float, high: float) -> Distribution:
    """Return a Distribution (shorthand)."""
    return Distribution(avg=avg, p95=p95, min=low, max=high)


def close(actual: Distribution, expected: Distribution) -> bool:
    """Return True when every figure matches to 1e-9."""
    pairs = [(getattr(actual, f), getattr(expected, f)) for f in ("avg", "p95", "min", "max")]
    return all(a is not None and b is not None and abs(a - b) < 1e-9 for a, b in pairs)


def test_stats_of_a_bank_whose_mode_is_gone(ctx: Context, conv: Bank) -> None:
    """A user mode no longer defined (MEMBANK_CONFIG_DIR unset) does not stop stats."""
    gone = conv.model_copy(update={"mode": "removed-user-mode"})
    assert stats.compute(ctx, gone) == stats.compute(ctx, conv)


def test_default_window_is_the_last_30_days(ctx: Context, conv: Bank, clock: FixedClock) -> None:
    result = stats.compute(ctx, conv)
    now = clock.now()
    assert (result.since, result.until) == (now - 30 * DAY, None)
    assert result.total_entries == 4
    assert result.unique_keys == 2
    assert result.unique_speakers == 2
    assert (result.first_entry_at, result.last_entry_at) == (now - 10 * DAY, now - DAY)
    # tokens 1,2,3,4: p95 at rank 0.95*3 = 2.85 -> 3 + 0.85*(4-3)
    assert close(result.token_count, dist(2.5, 3.85, 1, 4))
    # ages 1,2,3,10 days: p95 -> 3 + 0.85*(10-3)
    assert close(result.entry_age_days, dist(4.0, 8.95, 1, 10))
    # k1 has 3 entries, k2 has 1: p95 -> 1 + 0.95*(3-1)
    assert close(result.entries_per_key, dist(2.0, 2.9, 1, 3))
    assert result.top_keys == [Count(name="k1", entries=3), Count(name="k2", entries=1)]
    assert result.top_speakers == [Count(name="ann", entries=3), Count(name="bob", entries=1)]
    assert result.top_tags == [Count(name="x", entries=2), Count(name="y", entries=2)]
    # held in the window: 1+2+3+10 days, and the 40-day-old entry for all 30 days
    assert result.entry_days == pytest.approx(46.0)
    assert result.avg_entries_held == pytest.approx(46.0 / 30)


def test_time_frame_edges(ctx: Context, conv: Bank, clock: FixedClock) -> None:
    now = clock.now()
    since, until = now - 10 * DAY, now - 2 * DAY
    result = stats.compute(ctx, conv, since=since, until=until)
    # the entry exactly at `since` counts, the one exactly at `until` does not
    assert result.total_entries == 2
    assert result.top_keys == [Count(name="k1", entries=1), Count(name="k2", entries=1)]
    assert close(result.token_count, dist(3.5, 3.95, 3, 4))
    # held until `until`: 8 days (k2), 1 day (3 days old), 8 days (the 40-day-old entry)
    assert result.entry_days == pytest.approx(17.0)
    assert result.avg_entries_held == pytest.approx(17.0 / 8)


def test_days_and_until_only(ctx: Context, conv: Bank, clock: FixedClock) -> None:
    now = clock.now()
    since, until = stats.time_frame(now, days=2)
    assert (since, until) == (now - 2 * DAY, None)
    assert stats.compute(ctx, conv, since=since, until=until).total_entries == 2
    since, until = stats.time_frame(now, until=now - 4 * DAY)
    assert since == now - 34 * DAY
    assert stats.compute(ctx, conv, since=since, until=until).total_entries == 1
    with pytest.raises(InvalidInput):
        stats.time_frame(now, days=3, since=now - DAY)
    with pytest.raises(InvalidInput):
        stats.time_frame(now, since=now, until=now - DAY)


def test_empty_bank(ctx: Context, clock: FixedClock) -> None:
    bank = banks.create(ctx, BankCreate(name="empty", type="conversation"))
    result = stats.compute(ctx, bank)
    assert (result.total_entries, result.unique_keys, result.unique_speakers) == (0, 0, 0)
    assert result.first_entry_at is None and result.last_entry_at is None
    assert result.token_count == Distribution()
    assert result.entries_per_key == Distribution()
    assert (result.top_keys, result.top_speakers, result.top_tags) == ([], [], [])
    assert result.entry_days == 0.0
    assert "(no entries)" in stats.render(result)


def test_one_entry(ctx: Context, clock: FixedClock) -> None:
    bank = banks.create(ctx, BankCreate(name="one", type="conversation"))
    entries.write(ctx, bank, [turn(clock, "k", "ann", 3, 0.5, ["t"])])
    result = stats.compute(ctx, bank)
    assert (result.total_entries, result.unique_keys, result.unique_speakers) == (1, 1, 1)
    assert close(result.token_count, dist(3, 3, 3, 3))
    assert close(result.entry_age_days, dist(0.5, 0.5, 0.5, 0.5))
    assert close(result.entries_per_key, dist(1, 1, 1, 1))
    assert result.entry_days == pytest.approx(0.5)


def test_general_bank_has_no_speakers(ctx: Context, clock: FixedClock) -> None:
    bank = banks.create(ctx, BankCreate(name="facts", type="general"))
    entries.write(
        ctx,
        bank,
        [
            turn(clock, "u1", None, 1, 1, ["pref"]),
            turn(clock, "u1", None, 2, 1, ["pref", "ui"]),
            turn(clock, "u2", None, 4, 2, []),
        ],
    )
    result = stats.compute(ctx, bank)
    assert result.unique_speakers is None
    assert result.top_speakers == []
    assert result.top_keys == [Count(name="u1", entries=2), Count(name="u2", entries=1)]
    assert result.top_tags == [Count(name="pref", entries=2), Count(name="ui", entries=1)]
    text = stats.render(result)
    assert "unique groups" in text and "speakers" not in text


def test_summaries_are_not_speakers(ctx: Context, conv: Bank, clock: FixedClock) -> None:
    summary = turn(clock, "k1", "compaction-summary", 2, 1, [])
    entries.write(ctx, conv, [summary], kind="summary", summary_of=[["x"]])
    result = stats.compute(ctx, conv)
    assert result.total_entries == 5
    assert result.unique_speakers == 2
    assert [c.name for c in result.top_speakers] == ["ann", "bob"]
    assert result.top_keys[0] == Count(name="k1", entries=4)


def test_compaction_figures_come_from_the_bank(ctx: Context, conv: Bank, clock: FixedClock) -> None:
    compacted = conv.model_copy(update={"summary_count": 3, "last_compaction_at": clock.now()})
    banks.save(ctx, compacted)
    result = stats.compute(ctx, banks.get(ctx, "support"))
    assert (result.summary_count, result.last_compaction_at) == (3, clock.now())
    assert "3 (last compaction 2026-11-01 12:00 UTC)" in stats.render(result)


def test_scan_reads_no_vectors_or_text(
    ctx: Context, conv: Bank, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []
    real = ctx.store.scan

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(list(kwargs["columns"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(ctx.store, "scan", spy)
    stats.compute(ctx, conv)
    assert len(seen) == 1
    assert not {"vector", "text", "content"} & set(seen[0])


def test_cli_stats(
    ctx: Context,
    conv: Bank,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cli = partial(main, context=lambda data: ctx)
    assert cli(["stats", "support", "--days", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total_entries"] == 2
    assert cli(["stats", "support"]) == 0
    text = capsys.readouterr().out
    assert "unique conversations" in text and "k1" in text
    assert cli(["stats", "support", "--since", "2026-10-25", "--until", "2026-10-30T00:00"]) == 0
    assert "total entries         1" in capsys.readouterr().out
    assert cli(["stats", "support", "--days", "3", "--since", "2026-10-01"]) == 2
    assert cli(["stats", "support", "--since", "2999-01-01"]) == 2  # a frame after now
    assert "is in the future" in capsys.readouterr().err
    assert cli(["stats", "nope"]) == 3


def test_days_reaching_before_year_one_is_bad_input(
    ctx: Context,
    conv: Bank,
    clock: FixedClock,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(InvalidInput, match="before year 1"):
        stats.time_frame(clock.now(), days=100_000_000)
    cli = partial(main, context=lambda data: ctx)
    for days in ("100000000", "10000000000"):
        assert cli(["stats", "support", "--days", days]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and "Traceback" not in captured.err
        assert captured.err.count("\n") == 1 and "--days" in captured.err
    # a default 30-day window before a very early --until starts at the first datetime
    assert cli(["stats", "support", "--until", "0001-01-05", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total_entries"] == 0


def test_cli_until_a_date_includes_that_day(
    ctx: Context,
    conv: Bank,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cli = partial(main, context=lambda data: ctx)
    # the clock is 2026-11-01 12:00: one entry on 2026-10-31 (12:00), one on 2026-10-30
    one_day = ["--since", "2026-10-31", "--until", "2026-10-31", "--json"]
    assert cli(["stats", "support", *one_day]) == 0
    assert json.loads(capsys.readouterr().out)["total_entries"] == 1
    assert cli(["stats", "support", "--since", "2026-10-30", "--until", "2026-10-31"]) == 0
    assert "total entries         2" in capsys.readouterr().out
    assert cli(["stats", "support", "--since", "2026-10-30", "--until", "2026-10-31T12:00"]) == 0
    assert "total entries         1" in capsys.readouterr().out  # a date-time stays exclusive
