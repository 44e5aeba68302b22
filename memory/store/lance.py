"""The Store on LanceDB: one entries table per bank, on the bank registry (`registry`) and one
database connection (`connection`).

The URI is a local folder by default and object storage (s3://, gs://) by config; not
memory://, whose tables `to_lance()` (pylance, a separate in-memory store) cannot open.
Deletions are final: a delete commit, then `prune` rewrites the fragments holding deleted
rows (LanceDB remaps the bounded index segments over them) and drops every old version
(`segments`). Reads and commits that lose a race with another process are rerun from the
latest version by one retry policy (`retry`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import nullcontext
from datetime import timedelta
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memory.errors import StorageError
from memory.models import Entry
from memory.store import (
    carried,
    filters,
    indices,
    neighbour_text,
    queries,
    segments,
    unique,
    vector_index,
)
from memory.store.api_keys import KeyTable
from memory.store.audit_log import AuditLogTable
from memory.store.carried_table import CarriedTables
from memory.store.deletion import Deletions
from memory.store.entry_reads import EntryReads
from memory.store.idempotency import IdempotencyTable
from memory.store.lab_runs import LabRunsStore
from memory.store.latest_turns import Stamp, stamp_of
from memory.store.pages import EntryPages
from memory.store.registry import Registry
from memory.store.repairs import Repairs
from memory.store.retry import STORAGE_ERRORS, lost_race, race_of
from memory.store.rows import rows_of, with_search_text
from memory.store.schema import (
    CONTEXT_COLUMN,
    EMPTY_DIMS,
    ENTRY_COLUMNS,
    entries_schema,
)
from memory.store.table_scans import TableScans
from memory.types.entry_filter import EntryFilter
from memory.types.problems import engine_text

__all__ = ["LanceStore", "entries_table_name", "with_search_text"]


def entries_table_name(bank_id: str) -> str:
    """Return the name of a bank's entries table."""
    return f"entries_{bank_id}"


class LanceStore(
    TableScans,
    Deletions,
    Repairs,
    CarriedTables,
    EntryReads,
    EntryPages,
    LabRunsStore,
    Registry,
    KeyTable,
    IdempotencyTable,
    AuditLogTable,
):
    """The bank registry, the per-bank entries tables, the saved lab runs and the API keys in
    one LanceDB database.

    Args:
        uri: a local folder or an object-storage URI (s3://, gs://).
        storage_options: passed to LanceDB (credentials come from the environment otherwise).
        tuning: segment sizes, reindex interval, retry policy (the defaults suit real use).
    """

    # entries tables -------------------------------------------------------------------

    def create_entries_table(self, bank_id: str, dims: int) -> None:
        """Provision a bank's entries table (vectors `dims` wide) and its indices, if missing.

        The table owns its vectors' width from then on (`vector_dims`): no caller passes it.
        """
        if self._entries(bank_id) is None:
            self._provision(bank_id, dims)

    def _provision(self, bank_id: str, dims: int) -> Any:
        name = entries_table_name(bank_id)
        table = self._tables[name] = self._create_entries_table(name, dims)
        return table

    def entries_table(self, bank_id: str) -> Any | None:
        """Return a bank's LanceDB table at its latest version (None: no table), to inspect
        it (tests, benches); not part of the `Store` interface."""
        return self._entries(bank_id)

    def _entries(self, bank_id: str, *, latest: bool = True) -> Any | None:
        """Return a bank's entries table at its latest version (`latest` False: at the
        version this store last read, when it has it open), or None when it has none."""
        name = entries_table_name(bank_id)
        table = self._tables.get(name)
        if table is not None and not latest:
            return table
        if table is None:
            if self._absent():
                return None
            try:
                table = self._db.open_table(name)
            except ValueError:
                return None
            indices.upgrade(table)
            self._tables[name] = table
        else:
            try:
                table.checkout_latest()
            except (ValueError, OSError, RuntimeError):  # dropped by another handle
                self._tables.pop(name, None)
                return self._entries(bank_id)
        return table

    def _create_entries_table(self, name: str, dims: int) -> Any:
        return self._open_or_create(name, entries_schema(dims), prepare=indices.ensure)

    def vector_dims(self, bank_id: str) -> int | None:
        """Return the width of the vectors in a bank's entries table (None: no table)."""
        table = self._entries(bank_id)
        return None if table is None else int(table.schema.field("vector").type.list_size)

    def has_entries_table(self, bank_id: str) -> bool:
        """Return True when the bank's entries table exists (is provisioned)."""
        return entries_table_name(bank_id) in self._table_names()

    def _table_names(self) -> list[str]:
        names: list[str] = list(self._db.list_tables().tables)
        return names

    def drop_entries_table(self, bank_id: str) -> None:
        """Drop a bank's entries table and its files (reset source, delete bank)."""
        name = entries_table_name(bank_id)
        self._tables.pop(name, None)
        self.latest_turns.forget(bank_id)
        if name in self._table_names():
            self._db.drop_table(name)
        self._drop_carried(bank_id)

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
        """Store `written` in one commit (each entry's chunks `split`, one vector per chunk
        in `vectors`, its metadata and attachments as JSON in `stored_json`); returns the
        entries stored.

        With `turns` (a conversation bank), each chunk's full-text row starts with its
        date, and with `carry` a turn's first chunk also carries the turn before it when
        that is at most `carry_within` earlier (`memory.store.neighbour_text`): the turns
        carried are read and the rows committed under the bank's lock, so no deletion
        falls in between. With `unique`, an entry whose id the bank already holds is
        skipped, atomically per bank, and left out of the result.

        A deletion of this bank whose prune a crash or a full disk stopped is finished
        first when no one else holds the bank; if that prune fails again, its mark stays
        (the next pass finishes it) and the write goes on. `finish_deletions=False` skips
        that: a compaction sweep's summary, whose sweep prunes the bank once after all its
        partitions (else each summary would prune the partition before it).
        """
        if finish_deletions:
            self.finish_deletion(bank_id, wait=0)
        table = pa.table(rows_of(written, split, stored_json, time.time_ns()))
        dims = int(vectors.shape[1])
        table = table.append_column(
            "vector", pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), dims)
        )
        with self.bank_lock(bank_id, timeout=None) if carry else nullcontext():
            if turns:
                derived = neighbour_text.search_columns(
                    self, bank_id, written, split, carry=carry, within=carry_within
                )
                table = table.append_column(
                    indices.FTS_COLUMN, pa.array(derived.search_text, pa.string())
                )
                table = table.append_column(
                    CONTEXT_COLUMN, pa.array(derived.context_id, pa.string())
                )
                table = carried.with_carried_columns(table, derived.carried)
            if not unique:
                added = self._add_rows(bank_id, table, stamped=carry)
                if carry and derived.stamp is not None and len(added) == 1:
                    self.latest_turns.remember(bank_id, derived.stamp, added[0], derived.latest)
                return list(written)
            skipped = self.add_new_rows(bank_id, table)
        return [entry for entry in written if entry.id not in skipped]

    def add_rows(self, bank_id: str, rows: pa.Table) -> None:
        """Append chunk rows to a bank's entries table.

        Rows that carry a turn (`context_id`; the caller holds the bank's lock) keep their
        whole document in the bank's carried table and their own part here (`carried`).
        The store derives `search_text` where the rows lack it (see `schema.index_text`),
        appends at most `tuning.segment_rows` rows at a time, and folds new rows into the
        indices once enough piled up (`segments.index_new_rows`), so index segments stay
        bounded.
        """
        self._add_rows(bank_id, rows)

    def _add_rows(self, bank_id: str, rows: pa.Table, *, stamped: bool = False) -> list[Stamp]:
        """`add_rows`; returns the entries table's stamp after each append, when `stamped`."""
        dims = int(rows.schema.field("vector").type.list_size)
        table = self._entries(bank_id)
        if table is None:  # not `or`: an empty table is falsy (len() counts its rows)
            table = self._provision(bank_id, dims)
        side = None
        if carried.carrying(rows) and self.carries_apart(bank_id):
            rows, side = carried.split(rows)  # the carried text goes to its own table
        data = with_search_text(rows, entries_schema(dims))
        step = self.tuning.segment_rows
        added = [
            self._append(table, data.slice(start, step), stamped)
            for start in range(0, max(data.num_rows, 1), step)
        ]
        if side is not None:
            self._add_carried(bank_id, side)
        return [stamp for stamp in added if stamp is not None]

    def add_new_rows(self, bank_id: str, rows: pa.Table) -> set[str]:
        """Append the chunk rows whose entry id the bank does not hold yet (stored or folded
        into a summary), atomically per bank (`unique`); returns the entry ids skipped."""

        def known(ids: list[str]) -> set[str]:
            where = unique.present_where(ids)
            found = self.scan(bank_id, columns=["entry_id", "summary_of"], where=where)
            held = set(found.column("entry_id").to_pylist())
            held.update(i for many in found.column("summary_of").to_pylist() for i in many or ())
            return held & set(ids)

        return unique.append_new(
            self.uri, bank_id, rows, known=known, append=lambda t: self.add_rows(bank_id, t)
        )

    def _append(self, table: Any, part: pa.Table, stamped: bool = False) -> Stamp | None:
        with self._writing(table):
            self._on_latest(table, lambda t: t.add(part))
        dataset = table.to_lance()  # the version just committed: its stamp, its backlog
        self._maintain_if_due(table, dataset)
        return stamp_of(dataset) if stamped else None

    def _maintain_if_due(self, table: Any, dataset: Any | None = None) -> None:
        """Fold new rows into the indices once enough piled up (`segments.needs_indexing`;
        `dataset`: the latest version, already open)."""
        given = [dataset]  # a retry (files pruned under the read) reopens the latest

        def due(t: Any) -> bool:
            return segments.needs_indexing(t, self.tuning, given.pop() if given else None)

        if self._on_latest(table, due):
            self._maintain(table)

    def maintain(self, bank_id: str) -> None:
        """Fold unindexed rows into the indices, merge small index segments, compact fragments,
        build the vector index once the table is big enough (`vector_index`) and drop
        versions older than `tuning.keep_versions`."""
        table = self._entries(bank_id)
        if table is not None:
            self._maintain(table, merge=True)
        side = self._carried(bank_id)
        if side is not None:
            self._maintain_carried(side, merge=True)

    def upgrade_indices(self, bank_id: str) -> bool:
        """Rebuild the full-text index of a table made before it kept word positions (so
        quoted phrases can be searched) and build the vector index of a table that has
        outgrown exact search (`vector_index`: seconds; `membank maintain` runs this, no
        write does); return whether an index was (re)built."""
        table = self._entries(bank_id)
        if table is None:
            return False
        try:
            with self._writing(table):
                table.checkout_latest()
                rebuilt = indices.ensure_positions(table)
                built = vector_index.ensure(table, self.tuning.vector_index_rows)
        except STORAGE_ERRORS as exc:
            raise StorageError(
                f"rebuilding the full-text or vector index failed: {engine_text(exc)}"
            ) from exc
        table.checkout_latest()
        return rebuilt or built

    def _maintain(self, table: Any, *, merge: bool = False) -> None:
        try:
            with self._writing(table):
                table.checkout_latest()
                segments.index_new_rows(table, self.tuning, merge=merge)
                if merge:  # maintenance only: a build takes seconds, no write waits for it
                    vector_index.ensure(table, self.tuning.vector_index_rows)
            if merge:
                keep = self.tuning.keep_versions
                segments.drop_old_versions(table.to_lance(), keep, delete_unverified=False)
        except STORAGE_ERRORS as exc:
            # Another writer committed (or pruned) meanwhile: the rows are safe, and the next
            # write sees the same backlog and maintains again.
            if race_of(exc) is None:
                why = engine_text(exc)
                raise StorageError(f"table maintenance failed: {why}") from exc
        table.checkout_latest()

    def delete_where(
        self,
        bank_id: str,
        predicate: str,
        *,
        prune: bool = True,
        flt: EntryFilter | None = None,
        carried_too: bool = True,
    ) -> None:
        """Delete every chunk row matching `predicate` (the rows of `flt`, when given) and,
        unless `carried_too` is False (copies of the same entries are appended), their
        carried rows and the rows carrying them; prune so the rows are really gone."""
        table = self._entries(bank_id)
        if table is None:
            return
        if carried_too and self._carried(bank_id) is not None:
            self._delete_carried(bank_id, self._carried_where(bank_id, predicate, flt))
        try:
            with self._writing(table):
                self.tuning.retry.run(
                    lambda: table.delete(predicate), when=lost_race, reset=table.checkout_latest
                )
        except STORAGE_ERRORS as exc:
            why = engine_text(exc)
            raise StorageError(f"deleting rows failed: {why}") from exc
        if prune:
            self._prune_table(table)

    def _carried_where(self, bank_id: str, predicate: str, flt: EntryFilter | None) -> str | None:
        """Return the predicate of the carried rows a deletion of `predicate` (`flt`) takes."""
        where = None if flt is None else carried.deleted_where(flt)
        if where is None:  # a filter the carried table cannot test: by the ids deleted
            doomed = self.scan(bank_id, columns=["entry_id"], where=predicate)
            ids = pc.unique(doomed.column(0)).to_pylist()
            where = self._on_carried(bank_id, lambda t: carried.doomed_where(t, ids))
        return where

    def search(
        self,
        bank_id: str,
        *,
        method: str,
        vector: np.ndarray[Any, Any] | None,
        text: str | None,
        where: str | None = None,
        limit: int,
        columns: Sequence[str] = ENTRY_COLUMNS,
        flt: EntryFilter | None = None,
        scope: tuple[str, ...] | None = None,
    ) -> pa.Table:
        """Return up to `limit` chunk rows ranked by vector or full-text relevance among the
        entries `flt` matches (`where`, a predicate string, is the old spelling). A
        full-text search with a `scope` (keys: their rows) is scored by the
        scope's BM25 statistics in a table of up to `key_statistics_rows` rows.

        The result has a `_score` column, higher is better. A vector search with no filter
        uses the vector index once maintenance built one (approximate: `vector_index`); any
        filtered one is exact.
        """
        if flt is not None:
            where = filters.conjoin(where, filters.where_of(flt))
        apart = flt is None or flt.content is None  # the carried table keeps no content
        table = self._entries(bank_id)
        if table is None:
            return _empty(columns)
        side = self._carried(bank_id) if method == "fts" and apart else None
        if side is not None:
            result = self._on_latest(
                table,
                lambda t: carried.search(
                    t,
                    side,
                    text,
                    where,
                    limit,
                    columns,
                    scope=scope,
                    key_statistics_rows=self.tuning.key_statistics_rows,
                    dataset_of=self._dataset,
                ),
            )
        else:
            probes = self.tuning.nprobes
            result = self._on_latest(
                table,
                lambda t: queries.run_on_dataset(
                    self._dataset(t),
                    method,
                    vector,
                    text,
                    where,
                    limit,
                    columns,
                    nprobes=probes,
                    has_positions=lambda: indices.fts_has_positions(t),
                    scope=scope,
                    key_statistics_rows=self.tuning.key_statistics_rows,
                ),
            )
        return queries.with_score(result)

    def _dataset(self, table: Any) -> Any:
        """Return the Lance dataset of `table` at its checked-out version, opened once per
        version (opening one costs ~4 ms, more than the query it serves)."""
        version = table.version
        known = self._datasets.get(table.name)
        if known is None or known[0] is not table or known[1] != version:
            known = self._datasets[table.name] = (table, version, table.to_lance())
        return known[2]


def _empty(columns: Sequence[str]) -> pa.Table:
    """Return an empty result with `columns` (`_rowoffset` included) for a bank with no table."""
    schema = entries_schema(EMPTY_DIMS)
    types = {name: schema.field(name).type for name in schema.names} | {"_rowoffset": pa.uint64()}
    return pa.table({name: pa.array([], types[name]) for name in columns})
