"""Retention: delete entries older than the bank's `retention_days`, for good; never summarise.

Plan (pure): the cutoff is `now - retention_days`; an indefinite bank (None) has no plan.
Apply: one delete of `created_at < cutoff` (every chunk, so text and vectors go together),
then old table versions are pruned so nothing deleted can be read back. Entries written
meanwhile are dated now and never match, so concurrent writes are not lost. Every run first
finishes a deletion an earlier run (or a forget, or a compaction) left unpruned, on any bank,
indefinite ones included: a re-run after a crash finds nothing expired, but still prunes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from memory import purge, verify
from memory.clock import days_before
from memory.errors import MembankError
from memory.models import Bank
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.context import Context

Status = Literal["deleted", "nothing_expired", "indefinite", "failed"]


@dataclass(frozen=True)
class RetentionPlan:
    """What retention will do to one bank: delete entries created before `cutoff`."""

    bank_id: str
    cutoff: datetime | None
    """None: the bank keeps entries indefinitely and is not touched."""

    def entry_filter(self) -> EntryFilter | None:
        """Return the filter of the expired entries, or None for an indefinite bank."""
        return None if self.cutoff is None else EntryFilter(until=self.cutoff)


class ExpiredSummary(BaseModel):
    """A compaction summary retention deletes, and why: it is dated by the oldest entry it
    holds, so it goes with every fact it carries, newer ones included."""

    id: str
    key: str
    created_at: datetime
    covers: int | None = None
    """How many entries it replaced (when recorded)."""
    newest_fact_at: datetime | None = None
    """When the newest entry it holds was written (None: not recorded by older versions)."""
    inside_window: bool | None = None
    """True: it holds facts still inside the retention window (None: not known)."""


class RetentionResult(BaseModel):
    """What retention did to one bank."""

    bank_id: str
    bank_name: str
    account: str
    status: Status
    retention_days: int | None
    cutoff: datetime | None = None
    deleted: int = 0
    """Entries deleted (summaries included)."""
    summaries_deleted: int = 0
    summaries: list[ExpiredSummary] = []
    """The summaries deleted, each with how new the facts it carried were."""
    finished_pending: bool = False
    """An earlier deletion's prune had not completed (a crash, a full disk): done now."""
    error: str | None = None
    """Why retention could not be applied (status `failed`; `apply_all` only)."""


def plan_retention(bank: Bank, now: datetime) -> RetentionPlan:
    """Return the retention plan of `bank` at time `now`."""
    if bank.retention_days is None:
        return RetentionPlan(bank.id, None)
    # a retention longer than the calendar: nothing can have expired
    cutoff = days_before(now, bank.retention_days) or datetime.min.replace(tzinfo=UTC)
    return RetentionPlan(bank.id, cutoff)


def expired_summaries(ctx: Context, bank: Bank, cutoff: datetime) -> list[ExpiredSummary]:
    """Return the compaction summaries dated before `cutoff` (what retention deletes), each
    saying whether it holds facts newer than the cutoff."""
    from memory.compaction.apply import NEWEST_COVERED_AT, newest_fact_at

    if not ctx.store.has_entries_table(bank.id):
        return []
    found = ctx.store.entries(bank.id, EntryFilter(kind="summary", until=cutoff))
    notes = []
    for entry in found:
        recorded = NEWEST_COVERED_AT in entry.metadata
        newest = newest_fact_at(entry) if recorded else None
        covers = entry.metadata.get("covers")
        notes.append(
            ExpiredSummary(
                id=entry.id,
                key=entry.key,
                created_at=entry.created_at,
                covers=covers if isinstance(covers, int) else None,
                newest_fact_at=newest,
                inside_window=None if newest is None else newest >= cutoff,
            )
        )
    return notes


def summaries_at_risk(ctx: Context, bank: Bank) -> list[ExpiredSummary]:
    """Return the summaries the next retention run would delete under the bank's current
    retention (empty for an indefinite bank)."""
    plan = plan_retention(bank, ctx.clock.now())
    return [] if plan.cutoff is None else expired_summaries(ctx, bank, plan.cutoff)


def apply_retention(ctx: Context, bank: Bank) -> RetentionResult:
    """Delete the bank's expired entries and prune old versions; returns what was done."""
    plan = plan_retention(bank, ctx.clock.now())
    result = RetentionResult(
        bank_id=bank.id,
        bank_name=bank.name,
        account=bank.account,
        status="indefinite",
        retention_days=bank.retention_days,
        cutoff=plan.cutoff,
    )
    provisioned = ctx.store.has_entries_table(bank.id)  # deleting needs no embedder
    if provisioned and purge.finish(ctx, bank):
        verify.repair_counters(ctx, bank)  # the deletion may have removed summaries
        result = result.model_copy(update={"finished_pending": True})
    expired = plan.entry_filter()
    if expired is None:
        return result
    if not provisioned:  # no entries table: nothing was ever written
        return result.model_copy(update={"status": "nothing_expired"})
    count = ctx.store.count_entries(bank.id, expired)
    if count == 0:
        return result.model_copy(update={"status": "nothing_expired"})
    summaries = ctx.store.count_entries(bank.id, expired.and_(kind="summary"))
    notes = expired_summaries(ctx, bank, plan.cutoff) if summaries and plan.cutoff else []
    purge.delete_final(ctx, bank, expired)
    if summaries:
        purge.record_summary_count(ctx, bank)
    return result.model_copy(
        update={
            "status": "deleted",
            "deleted": count,
            "summaries_deleted": summaries,
            "summaries": notes,
        }
    )


def apply_all(
    ctx: Context, selected: Iterable[Bank], progress: Callable[[int, int], None] | None = None
) -> list[RetentionResult]:
    """Apply retention to each bank in turn; returns one result per bank.

    A bank that fails (e.g. storage it cannot reach) is reported with status `failed` and
    its error; the banks after it still get their retention. `progress` is called with
    (1, banks in all) after each bank.
    """
    chosen = list(selected)
    results: list[RetentionResult] = []
    for bank in chosen:
        try:
            results.append(apply_retention(ctx, bank))
        except MembankError as exc:
            results.append(_failed(bank, exc))
        if progress is not None:
            progress(1, len(chosen))
    return results


def _failed(bank: Bank, exc: MembankError) -> RetentionResult:
    return RetentionResult(
        bank_id=bank.id,
        bank_name=bank.name,
        account=bank.account,
        status="failed",
        retention_days=bank.retention_days,
        error=str(exc),
    )
