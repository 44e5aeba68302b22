"""The compaction names the tests call, from their modules (`memory.compaction` re-exports
nothing, so `import memory.compaction.plan` stays cheap)."""

from memory.compaction.apply import (
    STEPS,
    compact_partition,
    reconcile,
    recovery_deletions,
    set_checkpoint,
)
from memory.compaction.bank import compact_bank
from memory.compaction.plan import summary_budget

__all__ = [
    "STEPS",
    "compact_bank",
    "compact_partition",
    "reconcile",
    "recovery_deletions",
    "set_checkpoint",
    "summary_budget",
]
