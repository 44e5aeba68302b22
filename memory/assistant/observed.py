"""What a bank's own statistics tell the offline assistant: its figures (from `memory.stats`),
the rate its keys grow at, and how the proposed numbers compare with what it holds now."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.assistant.records import BankFigures
from memory.assistant.units import days_text, number

if TYPE_CHECKING:
    from memory.models import Bank
    from memory.stats import Stats


def figures_of(bank: Bank, stats: Stats) -> BankFigures:
    """Return the figures the assistant reads from `stats` (computed over all of `bank`'s
    entries, so the span and ages are the bank's whole history)."""
    first = stats.first_entry_at
    span = (stats.computed_at - first).total_seconds() / 86_400 if first is not None else 0.0
    largest = stats.entries_per_key.max
    return BankFigures(
        bank=bank.name,
        mode=bank.mode,
        entries=stats.total_entries,
        keys=stats.unique_keys,
        days=max(span, 1.0) if stats.total_entries else 0.0,
        tokens_per_entry=stats.token_count.avg,
        entries_per_key=stats.entries_per_key.avg,
        largest_key_entries=int(largest) if largest is not None else None,
        oldest_days=stats.entry_age_days.max,
        p95_age_days=stats.entry_age_days.p95,
    )


def usable(figures: BankFigures | None) -> BankFigures | None:
    """Return `figures` when they can inform the numbers (two entries or more), else None."""
    if figures is None or figures.entries < 2 or figures.tokens_per_entry is None:
        return None
    return figures


def key_rate(figures: BankFigures) -> float:
    """Return the entries one key gains a day, on average over the bank's history."""
    return (figures.entries_per_key or 0.0) / figures.days


def rate_line(figures: BankFigures) -> str:
    """Return the rationale line of the observed rate, with its arithmetic."""
    return (
        f"From bank {figures.bank!r}'s statistics: {number(figures.entries)} entries in "
        f"{number(figures.keys)} keys over {days_text(figures.days)} = "
        f"{number(key_rate(figures))} entries/day per key (no volume stated, so the bank's own)."
    )


def size_line(figures: BankFigures, max_tokens: int | None) -> str:
    """Return how the keys' size now compares with the proposed `max_tokens`."""
    per_key = figures.tokens_per_key or 0.0
    largest = (figures.largest_key_entries or 0) * (figures.tokens_per_entry or 0.0)
    held = (
        f"Its keys hold ~{number(per_key)} tokens on average (the largest "
        f"~{number(largest)}, {number(figures.largest_key_entries)} entries)"
    )
    if max_tokens is None:
        return held + ": with no max_tokens nothing compacts by size."
    if largest <= max_tokens:
        return held + f": max_tokens {number(max_tokens)} compacts none of them yet."
    if per_key > max_tokens:
        return held + f": max_tokens {number(max_tokens)} compacts most keys at the next run."
    return held + f": max_tokens {number(max_tokens)} compacts the largest keys at the next run."


def age_line(figures: BankFigures, retention_days: int | None) -> str | None:
    """Return what the proposed retention does to the entries stored now (None: no ages)."""
    oldest, p95 = figures.oldest_days, figures.p95_age_days
    if oldest is None or p95 is None:
        return None
    ages = f"The oldest entry is {days_text(oldest)} old (95% are under {days_text(p95)})"
    if retention_days is None:
        return ages + ": indefinite retention keeps them all."
    if oldest <= retention_days:
        return ages + f": retention {retention_days} days deletes none of them yet."
    share = "most of them" if p95 > retention_days else "the oldest few"
    return ages + f": retention {retention_days} days deletes {share} at the next retention run."
