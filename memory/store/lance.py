"""LanceDB storage: the bank registry and one entries table per bank. Only here is lancedb used.

The URI is a local folder by default and object storage (s3://, gs://) by config; not
memory://, whose tables `to_lance()` (pylance, a separate in-memory store) cannot open.
Deletions are final: `prune` rewrites fragments holding deleted rows, rebuilds the index
segments that covered them (`segments.rebuild`) and drops old table versions, so deleted
text and vectors do not survive in the files; a rewrite whose commit loses a race with
another process deletes the files it wrote (`rewrite.compact`, `segments.discard`).
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lance.optimize import CompactionOptions

from memory.errors import StorageError
from memory.locks import pruning, reading
from memory.models import Bank
from memory.store import filters, indices, rewrite, segments
from memory.store.schema import (
    BANKS_SCHEMA,
    ENTRY_COLUMNS,
    SPEAKER_SEPARATOR,
    entries_schema,
)

REGISTRY = "banks"
FRAGMENT_ROWS = 65_536
"""Compaction target: small fragments merge up to this many rows and bigger ones are left
alone, so a compaction rewrites at most about this many rows whatever the table's size."""
KEEP_VERSIONS = timedelta(days=7)
"""Maintenance drops table versions older than this (prune drops them all at once)."""


RACE_RETRIES = 5
"""Attempts of a commit or read that lost a race with a prune in another process."""

T = TypeVar("T")


def _lost_race(exc: BaseException) -> bool:
    """Return True for errors of reading a version file another process just pruned."""
    return "not found" in str(exc).lower()


def _on_latest(table: Any, action: Callable[[Any], T]) -> T:
    """Run a short read or commit; if another process pruned the files under it, reload and
    rerun.

    A prune removes the files of every version but the latest, so a read that started on
    an older version can find its data files gone, and a commit checking for conflicts can
    find an older version's transaction file gone (nothing was committed then); the latest
    version holds all live rows.
    """
    for attempt in range(RACE_RETRIES):
        try:
            return action(table)
        except (OSError, RuntimeError, ValueError) as exc:  # ArrowInvalid is a ValueError
            if not _lost_race(exc) or attempt == RACE_RETRIES - 1:
                raise
            table.checkout_latest()
    raise AssertionError("unreachable")  # pragma: no cover


def entries_table_name(bank_id: str) -> str:
    """Return the name of a bank's entries table."""
    return f"entries_{bank_id}"


class LanceStore:
    """The bank registry and the per-bank entries tables in one LanceDB database."""

    def __init__(self, uri: str, *, storage_options: dict[str, str] | None = None) -> None:
        self.uri = uri
        self._storage_options = storage_options
        self._connection: Any = None
        self._tables: dict[str, Any] = {}

    @property
    def _db(self) -> Any:
        """The LanceDB connection, opened on first use (a local folder is created then)."""
        if self._connection is None:
            try:
                self._connection = lancedb.connect(self.uri, storage_options=self._storage_options)
            except (OSError, RuntimeError, ValueError) as exc:
                reason = " ".join(str(exc).split())
                raise StorageError(
                    f"cannot open storage {self.uri!r}: {reason} (check --data / MEMBANK_URI)"
                ) from exc
        return self._connection

    def _absent(self) -> bool:
        """Return True for a local store folder that does not exist (reads find nothing there
        and leave no folder behind, so a mistyped path is not turned into an empty store)."""
        local = self.uri.removeprefix("file://")
        return "://" not in local and not os.path.exists(local)

    # registry -------------------------------------------------------------------------

    def _registry(self, *, create: bool = True) -> Any:
        if REGISTRY not in self._tables:
            if not create and self._absent():
                return None
            try:
                table = self._db.open_table(REGISTRY)
            except ValueError:
                if not create:
                    return None
                table = self._db.create_table(REGISTRY, schema=BANKS_SCHEMA, exist_ok=True)
            self._tables[REGISTRY] = table
        table = self._tables[REGISTRY]
        table.checkout_latest()
        return table

    def put_bank(self, bank: Bank) -> None:
        """Insert or replace a bank record."""
        row = {
            "id": bank.id,
            "account": bank.account,
            "name": bank.name,
            "type": bank.type,
            "body": bank.model_dump_json(),
        }
        self.put_bank_raw(row)

    def put_bank_raw(self, row: dict[str, str]) -> None:
        """Insert or replace a registry row as is (migrations and legacy fixtures)."""
        data = pa.Table.from_pylist([row], schema=BANKS_SCHEMA)
        (
            self._registry()
            .merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(data)
        )

    def bank_rows(self, account: str, where: str | None = None) -> list[dict[str, Any]]:
        """Return the raw registry rows of `account` (parsed `body`), optionally filtered."""
        predicate = filters.conjoin(filters.equals("account", account), where)
        registry = self._registry(create=False)
        if registry is None:
            return []
        table = _on_latest(registry, lambda t: t.to_lance().to_table(filter=predicate))
        return [json.loads(body) for body in table.column("body").to_pylist()]

    def all_bank_rows(self) -> list[dict[str, Any]]:
        """Return every registry row of every account (sweeps; never shown to a user)."""
        registry = self._registry(create=False)
        if registry is None:
            return []
        table = _on_latest(registry, lambda t: t.to_lance().to_table(columns=["body"]))
        return [json.loads(body) for body in table.column("body").to_pylist()]

    def delete_bank_record(self, account: str, bank_id: str) -> None:
        """Remove a bank from the registry and prune the registry's old versions."""
        table = self._registry()
        table.delete(
            filters.conjoin(filters.equals("account", account), filters.equals("id", bank_id))
        )
        self._prune_table(table)

    # entries tables -------------------------------------------------------------------

    def entries_table(self, bank_id: str, dims: int, *, create: bool = True) -> Any | None:
        """Return a bank's entries table, provisioning it (and its indices) if missing."""
        name = entries_table_name(bank_id)
        table = self._tables.get(name)
        if table is None:
            if not create and self._absent():
                return None
            try:
                table = self._db.open_table(name)
            except ValueError:
                if not create:
                    return None
                table = self._create_entries_table(name, dims)
            else:
                indices.upgrade(table)
            self._tables[name] = table
        else:
            try:
                table.checkout_latest()
            except (ValueError, OSError, RuntimeError):  # dropped by another handle
                self._tables.pop(name, None)
                return self.entries_table(bank_id, dims, create=create)
        return table

    def _create_entries_table(self, name: str, dims: int) -> Any:
        table = self._db.create_table(name, schema=entries_schema(dims), exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            existing = {idx.name for idx in table.list_indices()}
            if indices.KEY_INDEX not in existing:
                indices.create_key_index(table)
            if indices.FTS_INDEX not in existing:
                indices.create_fts_index(table)
        return table

    def vector_dims(self, bank_id: str) -> int | None:
        """Return the width of the vectors in a bank's entries table (None: no table)."""
        table = self.entries_table(bank_id, 0, create=False)  # dims only provision a table
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
        if name in self._table_names():
            self._db.drop_table(name)

    def add_rows(self, bank_id: str, dims: int, rows: pa.Table) -> None:
        """Append chunk rows (every column but `search_text`) to a bank's entries table.

        The store derives `search_text` (see `schema.index_text`), and now and then folds
        new rows into the indices and compacts small fragments (`maintain`).
        """
        table = self.entries_table(bank_id, dims)
        assert table is not None
        data = with_search_text(rows, entries_schema(dims))
        _on_latest(table, lambda t: t.add(data))
        if _on_latest(table, indices.needs_maintenance):
            self._maintain(table)

    def maintain(self, bank_id: str, dims: int) -> None:
        """Fold unindexed rows into the indices, merge index segments and compact fragments."""
        table = self.entries_table(bank_id, dims, create=False)
        if table is not None:
            self._maintain(table, merge=True)

    def _maintain(self, table: Any, *, merge: bool | None = None) -> None:
        try:
            dataset = table.to_lance()
            if merge is None:
                merge = segments.small_segments(dataset) >= indices.INDEX_SEGMENTS
            # segments for the unindexed fragments (and those a concurrent delete emptied);
            # when merging, the small segments (recent writes) are grouped too, because LanceDB
            # merges fragments only under one segment
            before = None if indices.remap_pending(table) else segments.snapshot(dataset)
            segments.rebuild(dataset, before, merge_small=merge)
            if merge:  # compact, then rebuild the segments of the rewritten fragments
                self._rewrite(table, {"target_rows_per_fragment": FRAGMENT_ROWS})
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    table.to_lance().cleanup_old_versions(older_than=KEEP_VERSIONS)
        except (OSError, RuntimeError, ValueError) as exc:  # ArrowInvalid is a ValueError
            # Another writer committed (or pruned) meanwhile: the rows are safe, and the next
            # write sees the same backlog and maintains again.
            if "conflict" not in str(exc).lower() and not _lost_race(exc):
                raise StorageError(f"table maintenance failed: {exc}") from exc
        table.checkout_latest()

    def _rewrite(self, table: Any, options: CompactionOptions) -> None:
        """Compact fragments with `options`, then rebuild the index segments that covered
        rewritten or deleted fragments (all of them after an interrupted rewrite). Big
        tables defer LanceDB's remap (`indices.DEFER_REMAP_ROWS`)."""
        table.checkout_latest()
        dataset = table.to_lance()
        before = None if indices.remap_pending(table) else segments.snapshot(dataset)
        defer = table.count_rows() >= indices.DEFER_REMAP_ROWS
        rewrite.compact(dataset, {**options, "defer_index_remap": defer})
        table.checkout_latest()
        segments.rebuild(table.to_lance(), before)
        table.checkout_latest()

    def delete_where(self, bank_id: str, dims: int, predicate: str, *, prune: bool = True) -> None:
        """Delete every chunk row matching `predicate`; prune so the rows are really gone."""
        table = self.entries_table(bank_id, dims, create=False)
        if table is None:
            return
        _on_latest(table, lambda t: t.delete(predicate))
        if prune:
            self._prune_table(table)

    def prune(self, bank_id: str, dims: int) -> None:
        """Rewrite fragments with deleted rows and drop old versions of a bank's table."""
        table = self.entries_table(bank_id, dims, create=False)
        if table is not None:
            self._prune_table(table)

    def _prune_table(self, table: Any) -> None:
        for attempt in range(RACE_RETRIES):
            try:
                options: CompactionOptions = {
                    "materialize_deletions": True,
                    "materialize_deletions_threshold": 0.0,
                    # the default target (1M rows) would merge untouched neighbours too
                    "target_rows_per_fragment": FRAGMENT_ROWS,
                }
                self._rewrite(table, options)
                # streaming readers (exports) hold `reading`: wait until they are done
                with pruning(self.uri, table.name), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    table.to_lance().cleanup_old_versions(older_than=timedelta(0))
                return
            except (OSError, RuntimeError, ValueError) as exc:  # ArrowInvalid is a ValueError
                # Concurrent writers or prunes: start again from the latest version.
                retry = "conflict" in str(exc).lower() or _lost_race(exc)
                if not retry or attempt == RACE_RETRIES - 1:
                    raise StorageError(f"pruning old versions failed: {exc}") from exc

    def version_count(self, bank_id: str, dims: int) -> int:
        """Return how many versions of the bank's table are kept (tests of pruning)."""
        table = self.entries_table(bank_id, dims, create=False)
        return 0 if table is None else len(table.list_versions())

    def scan(
        self,
        bank_id: str,
        dims: int,
        *,
        columns: Sequence[str] = ENTRY_COLUMNS,
        where: str | None = None,
    ) -> pa.Table:
        """Return the matching rows with only `columns` (an empty table if unprovisioned)."""
        table = self.entries_table(bank_id, dims, create=False)
        if table is None:
            return entries_schema(dims).empty_table().select(list(columns))
        result: pa.Table = _on_latest(
            table, lambda t: t.to_lance().to_table(columns=list(columns), filter=where)
        )
        return result

    def scan_batches(
        self,
        bank_id: str,
        dims: int,
        *,
        columns: Sequence[str] = ENTRY_COLUMNS,
        where: str | None = None,
        batch_size: int = 10_000,
        batch_bytes: int | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Yield matching rows in order, in batches, so callers stream whatever the size.

        The stream reads one table version from start to end; prunes of the table (in any
        process on this machine) wait for it, so its files stay in place meanwhile.
        """
        table = self.entries_table(bank_id, dims, create=False)
        if table is None:
            return
        with reading(self.uri, table.name):
            table.checkout_latest()
            yield from table.to_lance().to_batches(
                columns=list(columns),
                filter=where,
                batch_size=batch_size,
                batch_size_bytes=batch_bytes,
                scan_in_order=True,
            )

    def has_deleted_rows(self, bank_id: str, dims: int) -> bool:
        """Return True when deleted rows still sit in the table's files (a prune is due)."""
        table = self.entries_table(bank_id, dims, create=False)
        if table is None:
            return False
        fragments = _on_latest(table, lambda t: t.to_lance().get_fragments())
        return any(fragment.deletion_file() is not None for fragment in fragments)

    def count(self, bank_id: str, dims: int, where: str | None = None) -> int:
        """Return the number of chunk rows matching `where`."""
        table = self.entries_table(bank_id, dims, create=False)
        return 0 if table is None else int(_on_latest(table, lambda t: t.count_rows(where)))

    def search(
        self,
        bank_id: str,
        dims: int,
        *,
        method: str,
        vector: np.ndarray[Any, Any] | None,
        text: str | None,
        where: str | None,
        limit: int,
        columns: Sequence[str] = ENTRY_COLUMNS,
    ) -> pa.Table:
        """Return up to `limit` chunk rows ranked by vector or full-text relevance.

        The result has a `_score` column, higher is better.
        """
        table = self.entries_table(bank_id, dims, create=False)
        if table is None:
            return entries_schema(dims).empty_table().select(list(columns))
        result = _on_latest(
            table, lambda t: self._query(t, method, vector, text, where, limit, columns)
        )
        return _with_score(result)

    @staticmethod
    def _query(
        table: Any,
        method: str,
        vector: np.ndarray[Any, Any] | None,
        text: str | None,
        where: str | None,
        limit: int,
        columns: Sequence[str],
    ) -> pa.Table:
        wanted = list(columns)
        if method == "vector":
            query = table.search(vector, query_type="vector").distance_type("cosine")
            wanted.append("_distance")
        elif method == "fts":
            query = table.search(text, query_type="fts", fts_columns=indices.FTS_COLUMN)
            wanted.append("_score")
        else:
            raise ValueError(f"unknown search method {method!r}: use vector or fts")
        if where:
            query = query.where(where, prefilter=True)
        result: pa.Table = query.select(wanted).limit(limit).to_arrow()
        return result

    # deletions whose prune is due (memory.purge finishes them) ---------------------------

    def mark_deletion(self, bank_id: str, dims: int, *, pending: bool) -> None:
        """Set (before a delete commit) or clear the table's "prune due" mark, one small commit.

        The mark lives in the table's config (its manifest), so a process killed between a
        delete and its prune leaves it behind for `deletion_marked` to see.
        """
        table = self.entries_table(bank_id, dims, create=False)
        if table is None:
            return

        def commit(t: Any) -> None:
            t.checkout_latest()
            dataset = t.to_lance()
            if pending:
                dataset.update_config({PRUNE_DUE: "1"})
            elif PRUNE_DUE in dataset.config():
                dataset.delete_config_keys([PRUNE_DUE])

        for attempt in range(RACE_RETRIES):
            try:
                _on_latest(table, commit)
                break
            except (OSError, RuntimeError, ValueError) as exc:  # e.g. a full disk
                # two config commits at once (object storage: locks are per process) conflict
                text = str(exc).lower()
                if "incompatible" not in text and "conflict" not in text:
                    raise StorageError(f"marking the table for a deletion failed: {exc}") from exc
                if attempt == RACE_RETRIES - 1:
                    raise StorageError(f"marking the table for a deletion failed: {exc}") from exc
        table.checkout_latest()

    def deletion_marked(self, bank_id: str, dims: int) -> bool:
        """Return True when the latest version is marked "prune due" or keeps deleted rows in
        its files; reads the latest manifest only (cheap enough for every write)."""
        table = self.entries_table(bank_id, dims, create=False)
        if table is None:
            return False
        dataset = _on_latest(table, lambda t: t.to_lance())
        if PRUNE_DUE in dataset.config():
            return True
        return any(fragment.deletion_file() is not None for fragment in dataset.get_fragments())

    def deletion_audit(self, bank_id: str, dims: int) -> DeletionAudit:
        """Return what deleted data the table's files still hold, from every kept manifest.

        An old version holds deleted data when it has deletion files of its own or when the
        live row count drops between it and the latest version (entries tables are changed by
        appends and deletes only: compaction and index commits keep every live row).
        """
        table = self.entries_table(bank_id, dims, create=False)
        if table is None:
            return DeletionAudit(deleted_rows=0, stale_versions=0, old_versions=0, marked=False)
        dataset = _on_latest(table, lambda t: t.to_lance())
        versions = sorted(
            _on_latest(table, lambda t: t.to_lance().versions()), key=lambda v: v["version"]
        )
        rows = [_meta(v, "total_rows") for v in versions]
        stale, dropped = 0, False
        for index in range(len(versions) - 2, -1, -1):
            later, here = rows[index + 1], rows[index]
            dropped = dropped or later is None or here is None or later < here
            if dropped or _meta(versions[index], "total_deletion_file_rows") != 0:
                stale += 1
        deleted = _meta(versions[-1], "total_deletion_file_rows") if versions else 0
        if deleted is None:  # not recorded: at least one row per fragment with deletions
            deleted = sum(f.deletion_file() is not None for f in dataset.get_fragments())
        return DeletionAudit(
            deleted_rows=deleted,
            stale_versions=stale,
            old_versions=max(len(versions) - 1, 0),
            marked=PRUNE_DUE in dataset.config(),
        )


def _with_score(result: pa.Table) -> pa.Table:
    names = result.column_names
    if "_distance" in names:
        distance = np.asarray(result.column("_distance").to_numpy(zero_copy_only=False))
        score = pa.array(1.0 - distance / 2.0, pa.float32())
    elif "_score" in names:
        return result
    else:
        score = pa.array(np.zeros(result.num_rows, np.float32))
    drop = [n for n in ("_distance", "_score") if n in names]
    return result.drop_columns(drop).append_column("_score", score)


def with_search_text(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """Return `rows` with the derived `search_text` column, cast to `schema` (its order)."""
    if indices.FTS_COLUMN in rows.column_names:
        rows = rows.drop_columns([indices.FTS_COLUMN])
    speaker = rows.column("speaker").cast(pa.string())
    speaker = pc.if_else(pc.equal(speaker, ""), pa.scalar(None, pa.string()), speaker)
    text = rows.column("text").cast(pa.string())
    joined = pc.binary_join_element_wise(speaker, text, SPEAKER_SEPARATOR, null_handling="skip")
    rows = rows.append_column(indices.FTS_COLUMN, joined)
    return rows.select(schema.names).cast(schema)


PRUNE_DUE = "membank.prune_due"
"""Config key of an entries table whose last deletion may not be pruned yet."""


@dataclass(frozen=True)
class DeletionAudit:
    """What deleted data a bank's table still holds (`LanceStore.deletion_audit`)."""

    deleted_rows: int
    """Rows deleted but still in the latest version's data files (deletion files)."""
    stale_versions: int
    """Kept older versions that hold a row the latest version no longer has."""
    old_versions: int
    """Kept older versions, clean ones included (writes keep them for a while)."""
    marked: bool
    """A deletion marked its prune as due and no finishing pass has cleared the mark yet."""

    @property
    def final(self) -> bool:
        """True when no deleted row can be read back from the table's files."""
        return self.deleted_rows == 0 and self.stale_versions == 0


def _meta(version: dict[str, Any], name: str) -> int | None:
    """Return a count from a version's manifest summary (None when Lance did not record it)."""
    value = version.get("metadata", {}).get(name)
    return None if value is None else int(value)
