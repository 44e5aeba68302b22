"""Compact a whole bank (or one key) now: the on-demand path of the CLI, API and lab."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.compaction.apply import (
    DEFAULT_WAIT_SECONDS,
    CompactionResult,
    compact_partition,
    reconcile,
)
from memory.compaction.scan import evaluate_bank
from memory.models import Bank

if TYPE_CHECKING:
    from memory.context import Context


def compact_bank(
    ctx: Context, bank: Bank, key: str | None = None, *, wait: float | None = DEFAULT_WAIT_SECONDS
) -> list[CompactionResult]:
    """Compact every partition over a threshold (or just `key`); returns one result each.

    With `key`, that partition is always visited, so an interrupted compaction of it is
    finished even when it is under its thresholds. Without, a deletion whose prune did not
    complete is finished and the bank's counters are repaired first.
    """
    if key is not None:
        return [compact_partition(ctx, bank, key, wait=wait)]
    reconcile(ctx, bank)
    evaluation = evaluate_bank(ctx, bank)
    return [compact_partition(ctx, bank, p.key, wait=wait) for p in evaluation.over]
