"""Compaction use cases: compact a bank now. Surfaces (REST, MCP, the lab) call these instead
of `memory.compaction`; a write compacts its touched partitions through `ops.entries.write`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory import banks
from memory.compaction.apply import CompactionResult
from memory.compaction.bank import Progress, compact_bank
from memory.models import Bank

if TYPE_CHECKING:
    from memory.context import Context

__all__ = [
    "CompactNow",
    "Compacted",
    "CompactionResult",
    "Prepared",
    "Progress",
    "compact_now",
    "prepare",
    "run",
]


@dataclass(frozen=True)
class CompactNow:
    bank: str
    """The bank's id or name."""
    key: str | None = None
    """Only this partition (None: every partition over a threshold)."""


@dataclass(frozen=True)
class Compacted:
    bank: Bank
    partitions: list[CompactionResult] = field(default_factory=list)
    """One result per partition looked at."""


@dataclass(frozen=True)
class Prepared:
    """A compaction whose bank is resolved: what a job runs later (`run`)."""

    bank: Bank
    key: str | None


def prepare(ctx: Context, request: CompactNow) -> Prepared:
    """Resolve the request's bank (once: a job started with it never looks it up again).

    Raises:
        NotFound: an unknown bank (the same answer for another account's).
    """
    return Prepared(banks.get(ctx, request.bank), request.key)


def run(ctx: Context, prepared: Prepared, progress: Progress | None = None) -> Compacted:
    """Compact every partition of the bank over a threshold (or just `key`); one result
    each. `progress` is called with (1, partitions in all) after each partition."""
    bank = prepared.bank
    return Compacted(bank, compact_bank(ctx, bank, prepared.key, progress=progress))


def compact_now(ctx: Context, request: CompactNow, progress: Progress | None = None) -> Compacted:
    """`prepare` then `run`: compact the bank's partitions over a threshold now.

    Raises:
        NotFound: an unknown bank (the same answer for another account's).
    """
    return run(ctx, prepare(ctx, request), progress)
