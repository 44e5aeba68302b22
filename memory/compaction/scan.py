"""Find every partition over a threshold from the store's partition sizes (one projected
scan of a bank, `EntryStore.partition_sizes`); one threshold rule (`plan.threshold_reasons`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory.compaction.plan import threshold_reasons
from memory.models import Bank
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.context import Context


@dataclass(frozen=True)
class PartitionSize:
    """One partition's size and the thresholds it is over."""

    key: str
    entries: int
    tokens: int
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class BankEvaluation:
    """The result of evaluating every partition of a bank against its thresholds."""

    bank_id: str
    partitions: int
    """Partitions checked."""
    over: list[PartitionSize]
    """Partitions over a threshold, largest first."""


def evaluate_bank(ctx: Context, bank: Bank) -> BankEvaluation:
    """Return every partition of `bank` over a threshold, from one scan of two columns."""
    if not bank.has_trigger():
        return BankEvaluation(bank.id, 0, [])
    sizes = ctx.store.partition_sizes(bank.id)  # largest first
    over = [
        PartitionSize(s.key, s.entries, s.tokens, reasons)
        for s in sizes
        if (reasons := threshold_reasons(bank, s.entries, s.tokens))
    ]
    return BankEvaluation(bank.id, len(sizes), over)


def partition_size(ctx: Context, bank: Bank, key: str) -> PartitionSize:
    """Return one partition's size."""
    found = ctx.store.partition_sizes(bank.id, EntryFilter.key(key))
    entries, tokens = (found[0].entries, found[0].tokens) if found else (0, 0)
    return PartitionSize(key, entries, tokens, threshold_reasons(bank, entries, tokens))


def over_among(ctx: Context, bank: Bank, keys: Collection[str]) -> list[PartitionSize]:
    """Return the partitions of `keys` over a threshold, in key order, from one query of
    their sizes (the inline check after a write, however many keys it touched)."""
    if not keys or not bank.has_trigger():
        return []
    sizes = ctx.store.partition_sizes(bank.id, EntryFilter(keys=tuple(sorted(set(keys)))))
    over = [
        PartitionSize(s.key, s.entries, s.tokens, reasons)
        for s in sizes
        if (reasons := threshold_reasons(bank, s.entries, s.tokens))
    ]
    return sorted(over, key=lambda size: size.key)
