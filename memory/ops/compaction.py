"""Compaction use cases: compact a bank now, or the touched partitions over a threshold after
a write. Surfaces (REST, MCP, the lab) call these instead of `memory.compaction`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from memory.compaction.apply import CompactionResult
from memory.compaction.bank import compact_bank
from memory.compaction.bank import compact_if_over as _compact_if_over
from memory.models import Bank

if TYPE_CHECKING:
    from memory.context import Context

__all__ = ["CompactionResult", "compact_if_over", "compact_now"]


def compact_now(ctx: Context, bank: Bank, key: str | None = None) -> list[CompactionResult]:
    """Compact every partition of `bank` over a threshold (or just `key`); one result each."""
    return compact_bank(ctx, bank, key)


def compact_if_over(ctx: Context, bank: Bank, keys: Iterable[str]) -> list[CompactionResult]:
    """Compact each of `keys`' partitions over a threshold; returns what was done."""
    return _compact_if_over(ctx, bank, keys)
