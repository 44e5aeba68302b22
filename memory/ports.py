"""Small Protocols for the collaborators passed into the core: store, embedder, completer, clock."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

if TYPE_CHECKING:
    import pyarrow as pa

    from memory.models import Bank
    from memory.store.audit import DeletionAudit

Vectors = npt.NDArray[np.float32]


class Message(BaseModel):
    """One chat message sent to a completion model."""

    role: Literal["system", "user", "assistant"]
    content: str


class Embedder(Protocol):
    """Turns texts into fixed-size float32 vectors."""

    name: str
    dims: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return one L2-normalised vector per text, shape (len(texts), dims)."""
        ...


class Completer(Protocol):
    """Sends chat messages to a language model and returns its text."""

    model: str

    def complete(self, messages: Sequence[Message]) -> str:
        """Return the model's reply; raise ProviderError on failure or timeout."""
        ...


class Clock(Protocol):
    """Tells the time, so tests can fix it."""

    def now(self) -> datetime:
        """Return the current timezone-aware UTC time."""
        ...


class Store(Protocol):
    """The bank registry and one entries table per bank (`memory.store.LanceStore`).

    Rows are chunk rows (`memory.store.schema`). Filters (`where`, `predicate`) are built by
    `memory.store.filters`, which escapes every value. Each table owns its vectors' width:
    it is given once, when the table is made, and callers never pass it again. Deletions are
    final only after `prune` (or `delete_where(..., prune=True)`).
    """

    uri: str

    def put_bank(self, bank: Bank) -> None:
        """Insert or replace a bank record."""
        ...

    def put_bank_raw(self, row: dict[str, str]) -> None:
        """Insert or replace a registry row as is (migrations and legacy fixtures)."""
        ...

    def bank_rows(self, account: str, where: str | None = None) -> list[dict[str, Any]]:
        """Return the raw registry rows of `account`, optionally filtered."""
        ...

    def all_bank_rows(self) -> list[dict[str, Any]]:
        """Return every registry row of every account (sweeps; never shown to a user)."""
        ...

    def delete_bank_record(self, account: str, bank_id: str) -> None:
        """Remove a bank from the registry, for good."""
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

    def add_rows(self, bank_id: str, rows: pa.Table) -> None:
        """Append chunk rows in one write (the table is made if missing)."""
        ...

    def add_new_rows(self, bank_id: str, rows: pa.Table) -> set[str]:
        """Append the chunk rows whose entry id is not held yet, atomically per bank;
        returns the entry ids skipped."""
        ...

    def maintain(self, bank_id: str) -> None:
        """Fold unindexed rows into the indices and compact small fragments."""
        ...

    def upgrade_indices(self, bank_id: str) -> bool:
        """Rebuild indices an older table lacks features of; return whether any was rebuilt."""
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

    def old_version_count(self, bank_id: str) -> int:
        """Return how many versions besides the latest the table keeps."""
        ...

    def version_count(self, bank_id: str) -> int:
        """Return how many versions of the table are kept."""
        ...

    def table_version(self, bank_id: str) -> int | None:
        """Return the latest version number of the table (None: the bank has no table)."""
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

    def has_deleted_rows(self, bank_id: str) -> bool:
        """Return True when deleted rows still sit in the table's files (a prune is due)."""
        ...

    def count(self, bank_id: str, where: str | None = None) -> int:
        """Return the number of chunk rows matching `where`."""
        ...

    def search(
        self,
        bank_id: str,
        *,
        method: str,
        vector: Any,
        text: str | None,
        where: str | None,
        limit: int,
        columns: Sequence[str] = ...,
    ) -> pa.Table:
        """Return up to `limit` chunk rows ranked by relevance, with a `_score` column."""
        ...

    def mark_deletion(self, bank_id: str, *, pending: bool) -> None:
        """Set (before a delete) or clear the table's "prune due" mark."""
        ...

    def deletion_marked(self, bank_id: str) -> bool:
        """Return True when a deletion's prune may be due (cheap: the latest manifest)."""
        ...

    def deletion_audit(self, bank_id: str) -> DeletionAudit:
        """Return what deleted data the table's files still hold, from every kept version."""
        ...

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
        """Insert or replace a saved compaction test run (`memory.store.lab_runs`)."""
        ...

    def lab_run_bodies(self, account: str, bank_id: str | None = None) -> list[str]:
        """Return the JSON bodies of the account's saved test runs (of one bank), newest first."""
        ...

    def delete_lab_runs(self, account: str, bank_id: str | None = None) -> int:
        """Delete the account's saved test runs (of one bank) for good; returns how many."""
        ...

    def delete_lab_copies(self, account: str, bank_id: str, predicate: str) -> int:
        """Delete the saved test runs holding a copy of a bank entry `predicate` matches."""
        ...
