"""Compaction use cases: compact a bank now, or the touched partitions over a threshold after
a write. Surfaces (REST, MCP, the lab) call these instead of `memory.compaction`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from memory.compaction.apply import CompactionResult
from memory.compaction.bank import Progress, compact_bank
from memory.compaction.bank import compact_if_over as _compact_if_over
from memory.models import Bank

if TYPE_CHECKING:
    from memory.context import Context

__all__ = ["CompactionResult", "Progress", "compact_if_over", "compact_now"]


def compact_now(
    ctx: Context, bank: Bank, key: str | None = None, progress: Progress | None = None
) -> list[CompactionResult]:
    """Compact every partition of `bank` over a threshold (or just `key`); one result each.
    `progress` is called with (1, partitions in all) after each partition."""
    return compact_bank(ctx, bank, key, progress=progress)


def compact_if_over(ctx: Context, bank: Bank, keys: Iterable[str]) -> list[CompactionResult]:
    """Compact each of `keys`' partitions over a threshold; returns what was done."""
    return _compact_if_over(ctx, bank, keys)
