"""Compaction use cases: compact the touched partitions over a threshold after a write."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from memory.models import Bank

if TYPE_CHECKING:
    from memory.compaction.apply import CompactionResult
    from memory.context import Context


def compact_if_over(ctx: Context, bank: Bank, keys: Iterable[str]) -> list[CompactionResult]:
    """Compact each of `keys`' partitions over a threshold; returns what was done."""
    from memory.compaction.bank import compact_if_over as compact

    return compact(ctx, bank, keys)
