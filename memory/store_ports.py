"""The store's ports, all implemented by `memory.store.lance.LanceStore` (re-exported by
`memory.ports`):
- `BankRegistry`: bank records;
- `EntryStore`: entries in, entries out, by `memory.types.entry_filter.EntryFilter` (never
  SQL text, never a storage column), the final-deletion transaction (`delete_final`) and the
  partition lock;
- `LabRuns`: saved compaction test runs;
- `ApiKeys`: API key rows.
`Store` is all four plus the chunk-row methods still used while callers move (`scan`,
`count`, `delete_where`, ... with `where` strings): new code uses the entry-level methods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from memory.types.deletion import DeletionReceipt, PartitionSize

if TYPE_CHECKING:
    import pyarrow as pa

    from memory.models import Bank, Entry
    from memory.store.audit import DeletionAudit
    from memory.types.entry_filter import EntryFilter
    from memory.types.pages import EntryPage, PageAfter


class BankRegistry(Protocol):
    """The bank records of every account (raw rows; `memory.banks` parses them)."""

    def put_bank(self, bank: Bank) -> None:
        """Insert or replace a bank record."""
        ...

    def put_bank_raw(self, row: dict[str, str]) -> None:
        """Insert or replace a registry row as is (migrations and legacy fixtures)."""
        ...

    def bank_rows(
        self,
        account: str,
        where: str | None = None,
        *,
        bank_id: str | None = None,
        name: str | None = None,
        bank_type: str | None = None,
    ) -> list[dict[str, Any]]:
        """Return the raw registry rows of `account`, optionally only those with this id,
        name and/or type (`where`, a predicate string, is the old spelling)."""
        ...

    def find_bank_rows(
        self,
        account: str,
        *,
        bank_id: str | None = None,
        name: str | None = None,
        bank_type: str | None = None,
    ) -> list[dict[str, Any]]:
        """Return the raw registry rows of `account` with that id, name and type."""
        ...

    def all_bank_rows(self) -> list[dict[str, Any]]:
        """Return every registry row of every account (sweeps; never shown to a user)."""
        ...

    def delete_bank_record(self, account: str, bank_id: str) -> None:
        """Remove a bank from the registry, for good."""
        ...

    def names_lock(self, account: str) -> AbstractContextManager[None]:
        """Hold the account's bank-name lock for the block (one name claim at a time)."""
        ...


class EntryStore(Protocol):
    """One entries table per bank, spoken in entries and `EntryFilter`s.

    Reads return whole entries (an entry's chunks are the store's business). Every filter is
    compiled and escaped inside `memory.store` (`filters.where_of`). Deletions are final:
    `delete_final` is the whole transaction; a prune that fails is finished later by
    `finish_deletion`.
    """

    def entries(self, bank_id: str, flt: EntryFilter | None = None) -> list[Entry]:
        """Return the whole entries `flt` matches (None: every entry), oldest first."""
        ...

    def entry_page(
        self,
        bank_id: str,
        flt: EntryFilter | None,
        *,
        limit: int,
        offset: int = 0,
        after: PageAfter | None = None,
    ) -> EntryPage:
        """Return one page of the entries `flt` matches, oldest first, at the cost of the
        page (`memory.store.pages`): after the cursor `after`, else from `offset`."""
        ...

    def count_entries(self, bank_id: str, flt: EntryFilter | None = None) -> int:
        """Return how many entries `flt` matches (None: every entry)."""
        ...

    def partition_sizes(self, bank_id: str, flt: EntryFilter | None = None) -> list[PartitionSize]:
        """Return each partition's entry count and token total, largest first."""
        ...

    def entry_batches(
        self,
        bank_id: str,
        flt: EntryFilter | None = None,
        *,
        fields: Sequence[str] = ...,
        batch_size: int = ...,
        batch_bytes: int | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Yield the matching entries as Arrow batches, one row per entry, only `fields`
        under their entry names (`id`, `key`, ..., `chunk_count`, and `vectors`: the entry's
        chunk vectors in chunk order; `memory.models.ENTRY_FIELDS`), in storage order."""
        ...

    def entry_table(
        self, bank_id: str, flt: EntryFilter | None = None, *, fields: Sequence[str] = ...
    ) -> pa.Table:
        """Return the matching entries as one Arrow table, one row per entry, only `fields`
        under their entry names (as `entry_batches`, but not `vectors`), in one read."""
        ...

    def search(
        self,
        bank_id: str,
        *,
        method: str,
        vector: Any,
        text: str | None,
        where: str | None = None,
        limit: int,
        columns: Sequence[str] = ...,
        flt: EntryFilter | None = None,
    ) -> pa.Table:
        """Return up to `limit` chunk rows ranked by relevance (`_score`, higher is better)
        among the entries `flt` matches (`where` is the old spelling: pass `flt`)."""
        ...

    def search_chunks(
        self,
        bank_id: str,
        *,
        method: str,
        vector: Any,
        text: str | None,
        flt: EntryFilter | None = None,
        limit: int,
        fields: Sequence[str] = ...,
    ) -> pa.Table:
        """Return up to `limit` chunks ranked by relevance (`_score`, higher is better) among
        the entries `flt` matches: one row per chunk, `fields` under their names (entry
        fields, and `chunk`: its number in the entry, `chunk_text`, `carries`: the id of the
        turn its full-text row carries; `memory.models.HIT_FIELDS` by default)."""
        ...

    def chunks_at(
        self,
        bank_id: str,
        chunks: Sequence[tuple[str, int, int | None]],
        *,
        fields: Sequence[str] = ...,
    ) -> pa.Table:
        """Return the chunks named (entry id, chunk number, the `row` a search just gave it or
        None), in that order, with `fields` as `search_chunks` names them; a chunk no
        longer stored is left out."""
        ...

    def create_entries_table(self, bank_id: str, dims: int) -> None:
        """Provision a bank's entries table with vectors `dims` wide, if missing."""
        ...

    def vector_dims(self, bank_id: str) -> int | None:
        """Return the width of a bank's vectors (None: the bank has no table)."""
        ...

    def has_entries_table(self, bank_id: str) -> bool:
        """Return True when the bank's entries table exists."""
        ...

    def drop_entries_table(self, bank_id: str) -> None:
        """Drop a bank's entries table and its files."""
        ...

    def append(
        self,
        bank_id: str,
        written: Sequence[Entry],
        split: Sequence[Sequence[str]],
        vectors: Any,
        *,
        stored_json: Sequence[tuple[str, str]],
        turns: bool = False,
        carry: bool = False,
        carry_within: timedelta | None = None,
        unique: bool = False,
        finish_deletions: bool = True,
    ) -> list[Entry]:
        """Store entries in one commit, each as its chunks `split` with one vector per chunk;
        `turns`: conversation turns (dated index text), `carry`: a turn's index text also
        carries the turn before it (if at most `carry_within` earlier), `unique`: skip ids the
        bank holds. Returns those stored. A deletion whose prune did not complete is finished
        first when the bank is free (unless `finish_deletions` is False: a sweep that prunes
        the bank itself later)."""
        ...

    def add_new_rows(self, bank_id: str, rows: pa.Table) -> set[str]:
        """Append the chunk rows whose entry id is not held yet, atomically per bank;
        returns the entry ids skipped."""
        ...

    def maintain(self, bank_id: str) -> None:
        """Fold unindexed rows into the indices and compact small fragments."""
        ...

    def duplicate_entry_ids(self, bank_id: str) -> list[str]:
        """Return the ids stored as more than one entry."""
        ...

    def keep_one_copy(self, bank_id: str, entry_ids: Sequence[str]) -> None:
        """Keep one copy of each of these entries (stored more than once)."""
        ...

    def upgrade_indices(self, bank_id: str) -> bool:
        """Rebuild indices an older table lacks features of; return whether any was rebuilt."""
        ...

    def table_version(self, bank_id: str) -> int | None:
        """Return the latest version number of the table (None: the bank has no table)."""
        ...

    def version_count(self, bank_id: str) -> int:
        """Return how many versions of the table are kept."""
        ...

    def old_version_count(self, bank_id: str) -> int:
        """Return how many versions besides the latest the table keeps."""
        ...

    def has_deleted_rows(self, bank_id: str) -> bool:
        """Return True when deleted rows still sit in the table's files (a prune is due)."""
        ...

    def add_tags(self, bank_id: str, flt: EntryFilter, tags: Sequence[str]) -> int:
        """Add `tags` to the entries `flt` matches, keeping everything else (an upgrade of
        old rows by `membank maintain`); returns how many entries were rewritten."""
        ...

    def delete_final(
        self,
        bank_id: str,
        flt: EntryFilter,
        *,
        account: str,
        prune_now: bool = True,
        after_delete: Callable[[], None] | None = None,
    ) -> DeletionReceipt:
        """Delete the entries `flt` matches for good, under the bank's lock: the account's
        lab copies, the "prune due" mark, the neighbours' index text, one delete commit,
        then the prune (unless `prune_now` is False; `prune_bank` later). The receipt says
        how many entries went and whether the prune finished (`raise_if_pending`)."""
        ...

    def prune_bank(self, bank_id: str) -> DeletionReceipt:
        """Prune a bank's table under its lock (a deferred prune)."""
        ...

    def finish_deletion(
        self, bank_id: str, *, wait: float | None = None, full: bool = False
    ) -> DeletionReceipt | None:
        """Finish a deletion whose prune did not complete (None: nothing to finish, or the
        bank's lock was busy for `wait` seconds)."""
        ...

    def deletion_marked(self, bank_id: str) -> bool:
        """Return True when a deletion's prune may be due (cheap: the latest manifest)."""
        ...

    def deletion_audit(self, bank_id: str) -> DeletionAudit:
        """Return what deleted data the table's files still hold, from every kept version."""
        ...

    def partition_lock(
        self, bank_id: str, key: str, *, timeout: float | None = None
    ) -> AbstractContextManager[bool]:
        """Hold the partition's lock for the block (one compaction or merge at a time);
        yields False when not acquired within `timeout` seconds (0: try once)."""
        ...

    def bank_lock(
        self, bank_id: str, *, timeout: float | None = None
    ) -> AbstractContextManager[bool]:
        """Hold the bank's lock for the block (one delete-and-prune at a time)."""
        ...

    @property
    def partitions_exclusive(self) -> bool:
        """True when a held partition lock keeps every other process out until it is let go
        (a local folder's `flock`); False where another machine may hold the same partition
        meanwhile (object storage: in-process locks, or a lease that lapses if its holder
        stalls), so a compaction checks for a rival summary before it deletes."""
        ...


class LabRuns(Protocol):
    """Saved compaction test runs (`memory.store.lab_runs`)."""

    def put_lab_run(
        self,
        account: str,
        run_id: str,
        bank_id: str | None,
        created_at: datetime,
        body: str,
        *,
        entry_ids: Sequence[str] = (),
    ) -> None:
        """Insert or replace a saved compaction test run."""
        ...

    def lab_run_bodies(self, account: str, bank_id: str | None = None) -> list[str]:
        """Return the JSON bodies of the account's saved test runs (of one bank), newest first."""
        ...

    def delete_lab_runs(self, account: str, bank_id: str | None = None) -> int:
        """Delete the account's saved test runs (of one bank) for good; returns how many."""
        ...

    def update_lab_run_body(self, account: str, run_id: str, body: str) -> bool:
        """Replace one saved run's JSON body (False: no such run)."""
        ...

    def delete_lab_run(self, account: str, run_id: str) -> bool:
        """Delete one saved run for good (False: no such run)."""
        ...


class ApiKeys(Protocol):
    """API key rows (`memory.store.api_keys`)."""

    def put_key_row(self, row: dict[str, Any]) -> None:
        """Insert or replace an API key row."""
        ...

    def key_rows(
        self, *, account: str | None = None, key_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Return the key rows of `account` and/or with `key_id` (every row when neither)."""
        ...

    def key_table_version(self) -> int | None:
        """Return the keys table's latest version (None: no table)."""
        ...


class Store(BankRegistry, EntryStore, LabRuns, ApiKeys, Protocol):
    """All four ports plus the chunk-row methods kept while callers move to `EntryStore`
    (`memory.store.lance.LanceStore`); new code uses the entry-level methods.

    Rows are chunk rows (`memory.store.schema`). Filters (`where`, `predicate`) are built by
    `memory.store.filters`, which escapes every value. Each table owns its vectors' width:
    it is given once, when the table is made, and callers never pass it again. Deletions are
    final only after `prune` (or `delete_where(..., prune=True)`).
    """

    uri: str
    location: str
    """Where the storage is, for messages (a local folder absolute, a URI as given)."""

    def add_rows(self, bank_id: str, rows: pa.Table) -> None:
        """Append chunk rows in one write (the table is made if missing)."""
        ...

    def delete_where(self, bank_id: str, predicate: str, *, prune: bool = True) -> None:
        """Delete every chunk row matching `predicate` in one commit (then prune)."""
        ...

    def drop_neighbours_of(self, bank_id: str, predicate: str) -> None:
        """Remove the turns matching `predicate` from the index text of rows carrying them."""
        ...

    def prune(self, bank_id: str) -> None:
        """Rewrite what holds deleted rows and drop every old version: deletion is final."""
        ...

    def scan(
        self, bank_id: str, *, columns: Sequence[str] = ..., where: str | None = None
    ) -> pa.Table:
        """Return the matching rows with only `columns`."""
        ...

    def scan_batches(
        self,
        bank_id: str,
        *,
        columns: Sequence[str] = ...,
        where: str | None = None,
        batch_size: int = ...,
        batch_bytes: int | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Yield the matching rows in storage order, in bounded batches (streaming reads)."""
        ...

    def count(self, bank_id: str, where: str | None = None) -> int:
        """Return the number of chunk rows matching `where`."""
        ...

    def mark_deletion(self, bank_id: str, *, pending: bool) -> None:
        """Set (before a delete) or clear the table's "prune due" mark."""
        ...

    def delete_lab_copies(self, account: str, bank_id: str, predicate: str) -> int:
        """Delete the saved test runs holding a copy of a bank entry `predicate` matches."""
        ...
