"""Deletes that are final: a marked delete commit, then a prune; and finishing one a crash left.

A deletion marks its table "prune due" (one small commit in the table's config), takes the
doomed turns out of the index text of the turns after them (`store.neighbours`), then
deletes in one commit, then prunes (rewrites the files holding the rows, drops old versions).
A process killed, or a disk that fills, between the delete and the end of the prune leaves
the mark; the next write, sweep, retention or compaction run on the table, or `membank
maintain`, sees it from the latest manifest alone and finishes the prune (`finish`).
The mark is cleared only by such a pass that finds the table final after checking every
kept version (`LanceStore.deletion_audit`), so a completed prune still leaves exactly one
version; the mark then costs the next pass one check of the few versions since.

Delete-and-prune and the finishing pass run under the bank's lock (two prunes of one table
at once make LanceDB reject the later commit); appends (writes) are not blocked. The store
retries commits that lose a race: there is no second retry loop here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memory import banks
from memory.models import Bank
from memory.ports import PrunePending
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.context import Context
    from memory.store.audit import DeletionAudit

__all__ = ["PrunePending", "delete_final", "finish", "prune"]


def delete_final(
    ctx: Context,
    bank: Bank,
    flt: EntryFilter,
    *,
    prune_now: bool = True,
    after_delete: Callable[[], None] | None = None,
) -> int:
    """Delete the entries `flt` matches for good (`EntryStore.delete_final`); returns how many.

    Raises:
        PrunePending: the delete committed but the prune failed (e.g. a full disk); the
            deletion stays marked and the next run on the table, or `membank maintain`,
            finishes it.
    """
    receipt = ctx.store.delete_final(
        bank.id, flt, account=bank.account, prune_now=prune_now, after_delete=after_delete
    )
    receipt.raise_if_pending(bank.name)
    return receipt.entries


def marked(ctx: Context, bank: Bank) -> bool:
    """Return True when the bank's table is marked "prune due" or keeps deleted rows in its
    files (the latest manifest only: cheap enough to ask before every write). A mark stays
    after a completed prune until a finishing pass has checked the table."""
    return ctx.store.deletion_marked(bank.id)


def pending_deletions(ctx: Context, bank: Bank) -> bool:
    """Return True when deleted rows can still be read back from the bank's files (the rows
    themselves, or old versions holding them); reads every kept manifest."""
    return not audit(ctx, bank).final


def audit(ctx: Context, bank: Bank) -> DeletionAudit:
    """Return what deleted data the bank's table still holds (reads every kept manifest)."""
    return ctx.store.deletion_audit(bank.id)


def finish(ctx: Context, bank: Bank, *, wait: float | None = None, full: bool = False) -> bool:
    """Finish a deletion whose prune did not complete; returns True when it pruned
    (`EntryStore.finish_deletion`).

    Raises:
        PrunePending: the prune failed again (the mark stays).
    """
    receipt = ctx.store.finish_deletion(bank.id, wait=wait, full=full)
    if receipt is None:
        return False
    receipt.raise_if_pending(bank.name)
    return True


def prune(ctx: Context, bank: Bank) -> None:
    """Rewrite the files holding deleted rows and drop old versions, under the bank's lock.

    Raises:
        PrunePending: the prune failed (the deletions stay marked).
    """
    ctx.store.prune_bank(bank.id).raise_if_pending(bank.name)


def record_summary_count(ctx: Context, bank: Bank) -> None:
    """Store the bank's summary count after a deletion removed summaries (retention, forget)."""
    count = ctx.store.count_entries(bank.id, EntryFilter(kind="summary"))
    banks.update_counters(ctx.for_account(bank.account), bank.id, summary_count=count)
