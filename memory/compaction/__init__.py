"""Compaction per partition (per key): a pure plan, then a summary-first, journaled apply.

Inline compaction after a write is wired by `memory.context.Context.after_write`.
"""

from __future__ import annotations

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
