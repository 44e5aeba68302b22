"""Final deletion on LanceDB, as one transaction the store owns: the prune-due mark, the
neighbour rewrite, the delete commit, the prune, and finishing one a crash or a full disk
stopped (`LanceStore` mixes this in)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memory.errors import StorageError
from memory.ports import DeletionReceipt
from memory.store import (
    audit,
    filters,
    locks,
    segments,
)
from memory.store.connection import Connection
from memory.store.held_locks import Locks
from memory.store.retry import STORAGE_ERRORS, lost_race
from memory.types.entry_filter import EntryFilter
from memory.types.problems import engine_text


class Deletions(Connection, Locks):
    """Final deletions of a bank's entries and the finishing of pending ones."""

    if TYPE_CHECKING:  # provided by LanceStore

        def _entries(self, bank_id: str) -> Any | None: ...
        def _prune_carried(self, bank_id: str) -> None: ...
        def _carried_holds_deleted(self, bank_id: str) -> bool: ...
        def _carried_audit(self, bank_id: str) -> audit.DeletionAudit | None: ...
        def delete_lab_copies(self, account: str, bank_id: str, predicate: str) -> int: ...
        def delete_where(
            self,
            bank_id: str,
            predicate: str,
            *,
            prune: bool = True,
            flt: EntryFilter | None = None,
            carried_too: bool = True,
        ) -> None: ...
        def drop_neighbours_of(self, bank_id: str, predicate: str) -> None: ...
        def count(self, bank_id: str, where: str | None = None) -> int: ...
        def count_entries(self, bank_id: str, flt: EntryFilter | None = None) -> int: ...

    def prune(self, bank_id: str) -> None:
        """Rewrite fragments with deleted rows and drop old versions of a bank's table."""
        table = self._entries(bank_id)
        if table is not None:
            self._prune_table(table)
        self._prune_carried(bank_id)

    def has_deleted_rows(self, bank_id: str) -> bool:
        """Return True when deleted rows still sit in the table's data or index files (a prune
        is due); old versions are counted apart (`old_version_count`)."""
        table = self._entries(bank_id)
        if table is None:
            return False
        if self._on_latest(table, lambda t: segments.holds_deleted(t.to_lance())):
            return True
        return self._carried_holds_deleted(bank_id)

    # deletions whose prune is due (memory.purge finishes them; see `audit`) --------------

    def mark_deletion(self, bank_id: str, *, pending: bool) -> None:
        """Set (before a delete commit) or clear the table's "prune due" mark, one small commit.

        Raises:
            StorageError: the commit failed (e.g. a full disk): nothing was deleted.
        """
        table = self._entries(bank_id)
        if table is None:
            return
        try:
            self.tuning.retry.run(
                lambda: audit.mark(table.to_lance(), pending=pending),
                when=lost_race,
                reset=table.checkout_latest,
            )
        except STORAGE_ERRORS as exc:
            raise StorageError(
                f"marking the table for a deletion failed: {engine_text(exc)}"
            ) from exc
        table.checkout_latest()

    def deletion_marked(self, bank_id: str) -> bool:
        """Return True when the latest version is marked "prune due" or keeps deleted rows in
        its files; reads the latest manifest only (cheap enough for every write)."""
        table = self._entries(bank_id)
        if table is None:
            return False
        return bool(self._on_latest(table, lambda t: audit.marked(t.to_lance())))

    def deletion_audit(self, bank_id: str) -> audit.DeletionAudit:
        """Return what deleted data the table's files still hold, from every kept manifest."""
        table = self._entries(bank_id)
        if table is None:
            return audit.DeletionAudit(
                deleted_rows=0, stale_versions=0, old_versions=0, marked=False
            )
        found = self._on_latest(table, lambda t: audit.audit(t.to_lance()))
        side = self._carried_audit(bank_id)
        return found if side is None else audit.combined(found, side)

    def delete_final(
        self,
        bank_id: str,
        flt: EntryFilter,
        *,
        account: str,
        prune_now: bool = True,
        after_delete: Callable[[], None] | None = None,
    ) -> DeletionReceipt:
        """Delete the entries `flt` matches for good, as one transaction the store owns.

        Under the bank's lock: delete the account's saved lab runs holding a copy of them,
        mark the table "prune due", take them out of the index text of the turns after them,
        delete every chunk row in one commit, then prune (unless `prune_now` is False: a
        sweep prunes each bank once, after all its partitions; `prune_bank` then).
        `after_delete` runs between the delete commit and the prune (fault injection).

        Returns a receipt: how many entries went, and whether the prune finished. A prune
        that failed (a full disk) leaves the mark; `receipt.raise_if_pending()` raises
        PrunePending, and the next write, sweep or `finish_deletion` finishes it.

        Raises:
            StorageError: a step before the delete commit failed (nothing was deleted).
        """
        return self.delete_rows_final(
            bank_id,
            filters.where_of(flt) or "true",
            account=account,
            prune_now=prune_now,
            after_delete=after_delete,
            flt=flt,
        )

    def delete_rows_final(
        self,
        bank_id: str,
        predicate: str,
        *,
        account: str,
        prune_now: bool = True,
        after_delete: Callable[[], None] | None = None,
        flt: EntryFilter | None = None,
    ) -> DeletionReceipt:
        """`delete_final` by a chunk-row predicate (callers not yet on EntryFilter)."""
        with locks.bank_lock(self.uri, bank_id, timeout=None):
            if flt is not None:
                count = self.count_entries(bank_id, flt)
            else:
                count = self.count(bank_id, filters.conjoin(filters.HEAD_ROWS, predicate))
            self.delete_lab_copies(account, bank_id, predicate)  # saved test runs
            self.mark_deletion(bank_id, pending=True)
            self.drop_neighbours_of(bank_id, predicate)  # a turn's copy in the next one's index
            self.delete_where(bank_id, predicate, prune=False, flt=flt)  # and carried rows
            deleted_at = datetime.now(UTC)
            if after_delete is not None:
                after_delete()
            if not prune_now:
                return DeletionReceipt(entries=count, pruned=False, deleted_at=deleted_at)
            return self._pruned(bank_id, entries=count, deleted_at=deleted_at)

    def prune_bank(self, bank_id: str) -> DeletionReceipt:
        """Prune a bank's table under its lock (after `delete_final(..., prune_now=False)`);
        the receipt says whether the prune finished (`entries` is 0)."""
        with locks.bank_lock(self.uri, bank_id, timeout=None):
            return self._pruned(bank_id)

    def finish_deletion(
        self, bank_id: str, *, wait: float | None = None, full: bool = False
    ) -> DeletionReceipt | None:
        """Finish a deletion whose prune did not complete.

        Cheap when the table carries no mark (the latest manifest only), unless `full`
        (check every kept version anyway: deletions made before marks existed). Returns None
        when there was nothing to finish, or when the bank's lock was not got within `wait`
        seconds (whoever holds it is deleting or pruning now); else the receipt of the prune
        (`raise_if_pending` when it failed again: the mark stays).
        """
        if not full and not self.deletion_marked(bank_id):
            return None
        with locks.bank_lock(self.uri, bank_id, timeout=wait) as held:
            if not held:
                return None
            found = self.deletion_audit(bank_id)
            if not found.final:  # the mark stays: clearing it now would leave a second version
                return self._pruned(bank_id, deleted_at=found.marked_at)
            if found.marked:  # checked final: the next write need not look again
                self.mark_deletion(bank_id, pending=False)
            return None

    def _pruned(
        self, bank_id: str, *, entries: int = 0, deleted_at: datetime | None = None
    ) -> DeletionReceipt:
        """Prune (the caller holds the bank's lock); the receipt says when it became final."""
        failure = self._prune_error(bank_id)
        return DeletionReceipt(
            entries=entries,
            pruned=failure is None,
            prune_error=failure,
            deleted_at=deleted_at,
            final_at=datetime.now(UTC) if failure is None else None,
        )

    def _prune_error(self, bank_id: str) -> str | None:
        try:
            self.prune(bank_id)
        except StorageError as exc:
            return str(exc)
        except OSError as exc:
            return engine_text(exc)
        return None
