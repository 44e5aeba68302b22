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
from memory.errors import StorageError
from memory.models import Bank
from memory.store import filters
from memory.store.locks import bank_lock
from memory.sweeps import scoped

if TYPE_CHECKING:
    from memory.context import Context
    from memory.store.audit import DeletionAudit


class PrunePending(StorageError):
    """The rows are deleted (no read returns them) but their prune failed; it is due."""


def delete_for_good(
    ctx: Context,
    bank: Bank,
    predicate: str,
    *,
    prune_now: bool = True,
    after_delete: Callable[[], None] | None = None,
) -> None:
    """Delete the rows matching `predicate` in one commit, then prune the old versions.

    Args:
        ctx: The context (its store).
        bank: The bank whose table holds the rows.
        predicate: A storage filter (already escaped) of the rows to delete.
        prune_now: False when the caller prunes later (a sweep prunes each bank once, after
            all its partitions); until then the rows are gone from every read, not from disk.
        after_delete: Runs between the delete commit and the prune (a fault-injection point).

    Raises:
        PrunePending: the delete committed but the prune failed (e.g. a full disk); the
            deletion stays marked and the next run on the table, or `membank maintain`,
            finishes it.
    """
    with bank_lock(ctx.store.uri, bank.id, timeout=None):
        ctx.store.delete_lab_copies(bank.account, bank.id, predicate)  # saved test runs
        ctx.store.mark_deletion(bank.id, pending=True)
        ctx.store.drop_neighbours_of(bank.id, predicate)  # a turn's copy in the next one's index
        ctx.store.delete_where(bank.id, predicate, prune=False)
        if after_delete is not None:
            after_delete()
        if prune_now:
            _prune_or_pending(ctx, bank)


def _prune_or_pending(ctx: Context, bank: Bank) -> None:
    """Prune the bank's table; a failure says the deletion is done and its prune is due."""
    try:
        ctx.store.prune(bank.id)
    except (StorageError, OSError) as exc:
        raise PrunePending(
            f"the rows are deleted, but pruning them from disk failed: {exc}; the prune is "
            f"due and the next write, sweep or `membank maintain {bank.name}` finishes it"
        ) from exc


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
    """Finish a deletion whose prune did not complete; returns True when it pruned.

    Args:
        ctx: The context (its store).
        bank: The bank to check.
        wait: Seconds to wait for the bank's lock (None: as long as it takes). A pass that
            does not get it returns False: whoever holds it is deleting or pruning now, and
            a crash of theirs releases the lock for the next pass.
        full: Check every kept version even with no mark (`maintain`: also finds deletions
            made before marks existed, or by a process whose mark another cleared).

    Raises:
        PrunePending: the prune failed again (the mark stays).
    """
    if not full and not marked(ctx, bank):
        return False
    with bank_lock(ctx.store.uri, bank.id, timeout=wait) as held:
        if not held:
            return False
        found = ctx.store.deletion_audit(bank.id)
        if not found.final:  # the mark stays: clearing it now would leave a second version
            _prune_or_pending(ctx, bank)
        elif found.marked:  # checked final: the next write need not look again
            ctx.store.mark_deletion(bank.id, pending=False)
        return not found.final


def prune(ctx: Context, bank: Bank) -> None:
    """Rewrite the files holding deleted rows and drop old versions, under the bank's lock.

    Raises:
        PrunePending: the prune failed (the deletions stay marked).
    """
    with bank_lock(ctx.store.uri, bank.id, timeout=None):
        _prune_or_pending(ctx, bank)


def record_summary_count(ctx: Context, bank: Bank) -> None:
    """Store the bank's summary count after a deletion removed summaries (retention, forget)."""
    where = filters.conjoin("chunk_index = 0", filters.equals("kind", "summary"))
    count = ctx.store.count(bank.id, where)
    account_ctx = scoped(ctx, bank.account)
    fresh = banks.get(account_ctx, bank.id)
    banks.save(account_ctx, fresh.model_copy(update={"summary_count": count}))
