"""Compact a whole bank (or one key) now: the on-demand path of the CLI, API and lab; and
the touched partitions over a threshold, after a write (`compact_if_over`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from memory.compaction.apply import (
    DEFAULT_WAIT_SECONDS,
    CompactionResult,
    compact_partition,
    reconcile,
)
from memory.compaction.scan import evaluate_bank, partition_size
from memory.models import Bank

if TYPE_CHECKING:
    from memory.context import Context

log = logging.getLogger("membank.compaction")


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


def compact_if_over(ctx: Context, bank: Bank, keys: Iterable[str]) -> list[CompactionResult]:
    """Compact each of `keys`' partitions that is over a threshold (after a write); returns
    what was done to each partition that was over.

    The write has already succeeded: a failed summary is logged and left to the next write
    or sweep, and a partition another compaction holds is skipped.
    """
    results: list[CompactionResult] = []
    if not bank.has_trigger():
        return results
    for key in sorted(set(keys)):
        if not partition_size(ctx, bank, key).reasons:
            continue
        result = compact_partition(ctx, bank, key, wait=0)
        results.append(result)
        if result.status == "failed":
            log.warning(
                "compaction of %s/%s failed, entries kept for the next try: %s",
                bank.name,
                key,
                result.error,
            )
    return results
