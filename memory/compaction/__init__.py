"""Compaction per partition (per key): a pure plan, then a summary-first, journaled apply.

Importing this package registers inline compaction as an `entries.on_write` hook.
"""

from __future__ import annotations

from memory import entries
from memory.compaction.apply import (
    STEPS,
    CompactionResult,
    compact_partition,
    reconcile,
    record_stats,
    recovery_deletions,
    set_checkpoint,
)
from memory.compaction.bank import compact_bank
from memory.compaction.inline import compact_after_write
from memory.compaction.plan import (
    CompactionPlan,
    PartitionRow,
    plan_partition,
    summary_budget,
    threshold_reasons,
)
from memory.compaction.scan import BankEvaluation, PartitionSize, evaluate_bank

entries.on_write(compact_after_write)

__all__ = [
    "STEPS",
    "BankEvaluation",
    "CompactionPlan",
    "CompactionResult",
    "PartitionRow",
    "PartitionSize",
    "compact_after_write",
    "compact_bank",
    "compact_partition",
    "evaluate_bank",
    "plan_partition",
    "reconcile",
    "record_stats",
    "recovery_deletions",
    "set_checkpoint",
    "summary_budget",
    "threshold_reasons",
]
