"""Compact a whole bank (or one key) now: the on-demand path of the CLI, API and lab; and
the touched partitions over a threshold, after a write (`compact_if_over`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from memory.compaction.apply import (
    DEFAULT_WAIT_SECONDS,
    CompactionResult,
    compact_partition,
    reconcile,
)
from memory.compaction.scan import evaluate_bank, over_among
from memory.models import Bank

if TYPE_CHECKING:
    from memory.context import Context

log = logging.getLogger("membank.compaction")

Progress = Callable[[int, int], None]
"""Called with (partitions just done, partitions in all) as a long compaction goes."""


def compact_bank(
    ctx: Context,
    bank: Bank,
    key: str | None = None,
    *,
    wait: float | None = DEFAULT_WAIT_SECONDS,
    progress: Progress | None = None,
) -> list[CompactionResult]:
    """Compact every partition over a threshold (or just `key`); returns one result each.

    With `key`, that partition is always visited, so an interrupted compaction of it is
    finished even when it is under its thresholds. Without, a deletion whose prune did not
    complete is finished and the bank's counters are repaired first. `progress` is called
    with (1, partitions to do) after each partition.
    """
    over = [key] if key is not None else []
    if key is None:
        reconcile(ctx, bank)
        over = [p.key for p in evaluate_bank(ctx, bank).over]
    results = []
    for each in over:
        results.append(compact_partition(ctx, bank, each, wait=wait))
        if progress is not None:
            progress(1, len(over))
    return results


def compact_if_over(ctx: Context, bank: Bank, keys: Iterable[str]) -> list[CompactionResult]:
    """Compact each of `keys`' partitions that is over a threshold (after a write); returns
    what was done to each partition that was over.

    The write has already succeeded: a failed summary is logged and left to the next write
    or sweep, and a partition another compaction holds is skipped.
    """
    results: list[CompactionResult] = []
    for over in over_among(ctx, bank, set(keys)):
        result = compact_partition(ctx, bank, over.key, wait=0)
        results.append(result)
        if result.status == "failed":
            log.warning(
                "compaction of %s/%s failed, entries kept for the next try: %s",
                bank.name,
                over.key,
                result.error,
            )
    return results
