"""Retention use cases: apply a bank's retention now (or every bank's), and preview which
compaction summaries it would delete. The sweep's per-bank step is `memory.ops.sweeps.retain`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from memory import retention
from memory.models import Bank
from memory.ops.banks import get, list_banks
from memory.retention import ExpiredSummary, RetentionResult

if TYPE_CHECKING:
    from memory.context import Context

__all__ = [
    "ExpiredSummary",
    "RetentionPreview",
    "RetentionRequest",
    "RetentionResult",
    "apply",
    "preview",
]


@dataclass(frozen=True)
class RetentionRequest:
    """Retention for bank `bank` (id or name), or for every bank of the account (None)."""

    bank: str | None = None


@dataclass(frozen=True)
class RetentionPreview:
    """What the bank's retention would delete of its compaction summaries, and from when."""

    bank: Bank
    cutoff: datetime | None
    """Entries older than this go (None: an indefinite bank keeps everything)."""
    summaries: list[ExpiredSummary]


def apply(
    ctx: Context, request: RetentionRequest, progress: Callable[[int, int], None] | None = None
) -> list[RetentionResult]:
    """Delete expired entries for good (old versions pruned); returns one result per bank
    (`progress`: called with (1, banks in all) after each bank of an all-banks run).

    With a bank, its error is the caller's; over every bank, a bank that fails is reported
    with status `failed` and the banks after it still get their retention.

    Raises:
        NotFound: an unknown bank.
    """
    if request.bank is None:
        return retention.apply_all(ctx, list_banks(ctx), progress)
    return [retention.apply_retention(ctx, get(ctx, request.bank))]


def preview(ctx: Context, bank: Bank) -> RetentionPreview:
    """Return the compaction summaries the bank's retention would delete now; deletes nothing."""
    cutoff = retention.plan_retention(bank, ctx.clock.now()).cutoff
    return RetentionPreview(bank, cutoff, retention.summaries_at_risk(ctx, bank))
