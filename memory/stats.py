"""Bank statistics (SPEC "Statistics"): aggregates only, from a projected scan, with polars.

The scan reads six columns (key, speaker, kind, tags, token_count, created_at) of the
entry-level rows in the time frame, plus a count of older ones; vectors and text are never
loaded. The time frame is [since, until): by default the
last 30 days up to now, open-ended so an entry written this instant counts. Percentiles
interpolate linearly (numpy's default). Deleted entries are gone from storage, so they
never count.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import polars as pl
from pydantic import BaseModel

from memory.clock import days_before
from memory.errors import InvalidInput
from memory.models import Bank
from memory.types.fields import check_window

if TYPE_CHECKING:
    from memory.context import Context

DEFAULT_DAYS = 30
TOP = 10
DAY_SECONDS = 86_400.0
_COLUMNS = ["key", "speaker", "kind", "tags", "token_count", "created_at"]


class Distribution(BaseModel):
    """Average, 95th percentile, minimum and maximum of a measure (None when empty)."""

    avg: float | None = None
    p95: float | None = None
    min: float | None = None
    max: float | None = None


class Count(BaseModel):
    """One row of a breakdown table."""

    name: str
    entries: int


class Stats(BaseModel):
    """Aggregated statistics of a bank over a time frame; no individual entry appears."""

    bank_id: str
    bank: str
    type: str
    since: datetime
    """Start of the time frame (inclusive)."""
    until: datetime | None
    """End of the time frame (exclusive); None means up to now, open-ended."""
    computed_at: datetime
    total_entries: int
    unique_keys: int
    """Distinct conversations (conversation banks) or groups (general banks)."""
    unique_speakers: int | None
    """Distinct speakers; None for general banks, which have none. Compaction summaries
    are left out of speaker figures: their speaker is a marker, not a participant."""
    first_entry_at: datetime | None
    last_entry_at: datetime | None
    summary_count: int
    """Compaction summaries stored (from the bank record)."""
    last_compaction_at: datetime | None
    token_count: Distribution
    entry_age_days: Distribution
    """Age at `computed_at`, in days."""
    entries_per_key: Distribution
    top_keys: list[Count]
    top_speakers: list[Count]
    top_tags: list[Count]
    entry_days: float
    """Storage cost: entry-days held within the frame by the entries stored now (entries
    created before the frame count from its start; deleted entries are not known)."""
    avg_entries_held: float
    """entry_days divided by the frame's length in days."""


def time_frame(
    now: datetime,
    *,
    days: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> tuple[datetime, datetime | None]:
    """Return (since, until) from `--days N` or `--since/--until` (default: last 30 days).

    Raises:
        InvalidInput: days combined with since/until, days < 1, days reaching back before
            year 1, or since not before until.
    """
    if days is not None and (since is not None or until is not None):
        raise InvalidInput("use either --days N or --since/--until, not both")
    if days is not None and days < 1:
        raise InvalidInput(f"--days must be at least 1, got {days}")
    if since is None and until is None:
        start = days_before(now, days or DEFAULT_DAYS)
        if start is None:
            raise InvalidInput(
                f"--days {days} reaches back before year 1: use a smaller number (or --since DATE)"
            )
        return start, None
    if since is None:
        assert until is not None
        since = days_before(until, DEFAULT_DAYS) or datetime.min.replace(tzinfo=UTC)
    check_window(since, until)
    return since, until


def compute(
    ctx: Context,
    bank: Bank,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    top: int = TOP,
) -> Stats:
    """Return the bank's statistics over [since, until) (default: the last 30 days)."""
    now = ctx.clock.now().astimezone(UTC)
    if since is None:
        since = days_before(until or now, DEFAULT_DAYS) or datetime.min.replace(tzinfo=UTC)
    # One projected read of every entry, the time frame filtered here: a pushed-down filter
    # makes Lance read the other columns row by row (late materialization), slower than
    # reading these small columns whole (bench/stats.py), and the same read counts the
    # entries before the frame.
    rows = pl.from_arrow(ctx.store.entry_table(bank.id, fields=_COLUMNS))
    assert isinstance(rows, pl.DataFrame)
    heads = rows.lazy()
    created = pl.col("created_at")
    window = created >= since if until is None else (created >= since) & (created < until)
    end = _end(until, now)
    frame, before = pl.collect_all(
        [heads.filter(window), heads.filter(created < since).select(pl.len())]
    )
    older = int(before.item()) if since < end else 0
    return from_frame(frame, bank, since=since, until=until, now=now, older=older, top=top)


def _end(until: datetime | None, now: datetime) -> datetime:
    """Return when holding stops counting: `until`, but never later than now."""
    return now if until is None else min(until, now)


def from_frame(
    frame: pl.DataFrame,
    bank: Bank,
    *,
    since: datetime,
    until: datetime | None,
    now: datetime,
    older: int = 0,
    top: int = TOP,
) -> Stats:
    """Return statistics from the entry rows in the time frame.

    `older` is the number of stored entries created before `since`: they are held for the
    whole frame, so they count in the storage estimate only.
    """
    end = _end(until, now)
    window = frame.lazy()
    seconds = (pl.lit(now) - pl.col("created_at")).dt.total_microseconds() / 1e6
    held = (pl.lit(end) - pl.col("created_at")).dt.total_microseconds() / 1e6
    summary = window.select(
        pl.len().alias("total"),
        pl.col("created_at").min().alias("first"),
        pl.col("created_at").max().alias("last"),
        held.clip(0).sum().alias("held"),
        *_dist(pl.col("token_count"), "tokens"),
        *_dist(seconds / DAY_SECONDS, "age"),
    )
    per_key, speakers, tags, cards = pl.collect_all(
        [
            window.group_by("key").agg(pl.len().alias("n")),
            window.filter(pl.col("kind") != "summary")
            .drop_nulls("speaker")
            .group_by("speaker")
            .agg(pl.len().alias("n")),
            window.select("tags").explode("tags").drop_nulls("tags").group_by("tags").len("n"),
            summary,
        ]
    )
    row = cards.row(0, named=True)
    frame_days = max((end - since).total_seconds(), 0.0) / DAY_SECONDS
    entry_days = float(row["held"] or 0.0) / DAY_SECONDS + older * frame_days
    conversation = bank.type == "conversation"
    return Stats(
        bank_id=bank.id,
        bank=bank.name,
        type=bank.type,
        since=since,
        until=until,
        computed_at=now,
        total_entries=row["total"],
        unique_keys=per_key.height,
        unique_speakers=speakers.height if conversation else None,
        first_entry_at=row["first"],
        last_entry_at=row["last"],
        summary_count=bank.summary_count,
        last_compaction_at=bank.last_compaction_at,
        token_count=_distribution(row, "tokens"),
        entry_age_days=_distribution(row, "age"),
        entries_per_key=_distribution(
            per_key.select(_dist(pl.col("n"), "k")).row(0, named=True), "k"
        ),
        top_keys=_top(per_key, "key", top),
        top_speakers=_top(speakers, "speaker", top) if conversation else [],
        top_tags=_top(tags, "tags", top),
        entry_days=entry_days,
        avg_entries_held=entry_days / frame_days if frame_days else 0.0,
    )


def _dist(expr: pl.Expr, prefix: str) -> list[pl.Expr]:
    return [
        expr.mean().alias(f"{prefix}_avg"),
        expr.quantile(0.95, interpolation="linear").alias(f"{prefix}_p95"),
        expr.min().cast(pl.Float64).alias(f"{prefix}_min"),
        expr.max().cast(pl.Float64).alias(f"{prefix}_max"),
    ]


def _distribution(row: dict[str, Any], prefix: str) -> Distribution:
    return Distribution(
        avg=row[f"{prefix}_avg"],
        p95=row[f"{prefix}_p95"],
        min=row[f"{prefix}_min"],
        max=row[f"{prefix}_max"],
    )


def _top(counts: pl.DataFrame, column: str, top: int) -> list[Count]:
    best = counts.sort(["n", column], descending=[True, False]).head(top)
    return [Count(name=str(name), entries=n) for name, n in best.iter_rows()]


def render(stats: Stats) -> str:
    """Return the statistics as readable text tables for a terminal."""
    group = "conversations" if stats.type == "conversation" else "groups"
    end = "now" if stats.until is None else _when(stats.until)
    lines = [f"Statistics of {stats.bank} ({stats.type}), {_when(stats.since)} to {end}", ""]
    compaction = str(stats.summary_count)
    if stats.last_compaction_at:
        compaction += f" (last compaction {_when(stats.last_compaction_at)})"
    cards = [
        ("total entries", f"{stats.total_entries:,}"),
        (f"unique {group}", f"{stats.unique_keys:,}"),
        *(
            [("unique speakers", f"{stats.unique_speakers:,}")]
            if stats.unique_speakers is not None
            else []
        ),
        ("date range", _range(stats)),
        ("compaction summaries", compaction),
        (
            "storage (entry-days)",
            f"{stats.entry_days:,.1f} ({stats.avg_entries_held:,.1f} entries held per day)",
        ),
    ]
    lines += _table(cards, ["summary", ""], numbers=False)
    dists = [
        ("tokens per entry", stats.token_count),
        ("entry age (days)", stats.entry_age_days),
        (f"entries per {group[:-1]}", stats.entries_per_key),
    ]
    rows = [
        (name, *(_num(getattr(d, f)) for f in ("avg", "p95", "min", "max"))) for name, d in dists
    ]
    lines += ["", *_table(rows, ["distribution", "avg", "p95", "min", "max"])]
    for title, counts in (
        (f"top {group}", stats.top_keys),
        ("top speakers", stats.top_speakers),
        ("top tags", stats.top_tags),
    ):
        if title == "top speakers" and stats.unique_speakers is None:
            continue
        body = [(c.name, f"{c.entries:,}") for c in counts] or [("(none)", "")]
        lines += ["", *_table(body, [title, "entries"])]
    return "\n".join(lines)


def _when(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _range(stats: Stats) -> str:
    if stats.first_entry_at is None or stats.last_entry_at is None:
        return "(no entries)"
    return f"{_when(stats.first_entry_at)} to {_when(stats.last_entry_at)}"


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def _table(
    rows: Sequence[Sequence[str]], headers: Sequence[str], *, numbers: bool = True
) -> list[str]:
    cells = [list(headers), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    out = []
    for index, row in enumerate(cells):
        pad = str.rjust if numbers else str.ljust
        rest = [pad(c, w) for c, w in zip(row[1:], widths[1:], strict=True)]
        parts = [row[0].ljust(widths[0]), *rest]
        out.append("  ".join(parts).rstrip())
        if index == 0:
            out.append("  ".join("-" * w for w in widths))
    return out
