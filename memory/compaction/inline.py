"""Inline compaction: after every write, compact the touched partitions that went over."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from memory.compaction.apply import CompactionResult, compact_partition
from memory.compaction.scan import partition_size
from memory.models import Bank

if TYPE_CHECKING:
    from memory.context import Context

log = logging.getLogger("membank.compaction")


def compact_after_write(ctx: Context, bank: Bank, keys: set[str]) -> list[CompactionResult]:
    """Compact each touched partition over a threshold (`Context.after_write`'s default); returns
    what was done to each partition that was over.

    The write has already succeeded: a failed summary is logged and left to the next write
    or sweep, and a partition another compaction holds is skipped.
    """
    results: list[CompactionResult] = []
    if not bank.has_trigger():
        return results
    for key in sorted(keys):
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
