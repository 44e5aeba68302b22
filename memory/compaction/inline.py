"""Inline compaction: after every write, compact the touched partitions that went over
(`Context.after_write`'s default; the rule itself is `bank.compact_if_over`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.compaction.bank import compact_if_over

if TYPE_CHECKING:
    from memory.compaction.apply import CompactionResult
    from memory.context import Context
    from memory.models import Bank


def compact_after_write(ctx: Context, bank: Bank, keys: set[str]) -> list[CompactionResult]:
    """Compact each touched partition over a threshold; returns what was done to each."""
    return compact_if_over(ctx, bank, keys)
