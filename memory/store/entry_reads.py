"""The entry-level reads of the LanceDB store (`memory.ports.EntryStore`): entries, counts,
partition sizes, entry batches and tables, ranked chunks, all by `EntryFilter` and under
entry field names (`LanceStore` mixes this in)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from memory.models import ENTRY_FIELDS, HIT_FIELDS, Entry
from memory.ports import PartitionSize
from memory.store import (
    filters,
    heads,
)
from memory.store.connection import Connection
from memory.store.rows import entries_of
from memory.store.schema import (
    ENTRY_COLUMNS,
)
from memory.types.entry_filter import EntryFilter


class EntryReads(Connection):
    """Reads of whole entries by filter: chunk rows never leave the store."""

    if TYPE_CHECKING:  # provided by LanceStore

        def _entries(self, bank_id: str, *, latest: bool = True) -> Any | None: ...
        def _dataset(self, table: Any) -> Any: ...
        def vector_dims(self, bank_id: str) -> int | None: ...
        def scan(
            self, bank_id: str, *, columns: Sequence[str] = ..., where: str | None = None
        ) -> pa.Table: ...
        def scan_batches(
            self,
            bank_id: str,
            *,
            columns: Sequence[str] = ...,
            where: str | None = None,
            batch_size: int = 10_000,
            batch_bytes: int | None = None,
        ) -> Iterator[pa.RecordBatch]: ...
        def count(self, bank_id: str, where: str | None = None) -> int: ...
        def search(
            self,
            bank_id: str,
            *,
            method: str,
            vector: np.ndarray[Any, Any] | None,
            text: str | None,
            where: str | None = None,
            limit: int,
            columns: Sequence[str] = ...,
            flt: EntryFilter | None = None,
            scope: tuple[str, ...] | None = None,
        ) -> pa.Table: ...

    def search_chunks(
        self,
        bank_id: str,
        *,
        method: str,
        vector: np.ndarray[Any, Any] | None,
        text: str | None,
        flt: EntryFilter | None = None,
        limit: int,
        fields: Sequence[str] = HIT_FIELDS,
    ) -> pa.Table:
        """Return up to `limit` chunks ranked by vector or full-text relevance among the
        entries `flt` matches, one row per chunk with `fields` under their names (entry
        fields, and `chunk`, `chunk_text`, `carries`: `heads.CHUNK_FIELDS`) and `_score`
        (higher is better); full-text scores are by the BM25 statistics of the filter's
        keys' rows (`term_weights`)."""
        if flt is not None and flt.matches_nothing:
            return pa.table({f: [] for f in [*fields, "_score"]})
        columns = heads.hit_columns_of(fields)
        found = self.search(
            bank_id,
            method=method,
            vector=vector,
            text=text,
            where=filters.where_of(flt),
            limit=limit,
            columns=columns,
            scope=None if flt is None else flt.keys or None,
        )
        return found.rename_columns(dict(zip(columns, fields, strict=True)))

    def chunks_at(
        self,
        bank_id: str,
        chunks: Sequence[tuple[str, int, int | None]],
        *,
        fields: Sequence[str] = HIT_FIELDS,
    ) -> pa.Table:
        """Return the chunk rows `chunks` names, in that order, with `fields` under their
        names (as `search_chunks`).

        Each chunk is (entry id, chunk number, its `row` as a search of this table gave it, or
        None). Rows are taken by their position in the version searched (a few reads,
        whatever the table's size); a position that names another chunk or none (the table
        changed since the search) is looked up by entry id instead. A chunk no longer
        stored is left out.
        """
        if not chunks:
            return pa.table({f: [] for f in fields})
        columns = heads.hit_columns_of(fields)
        wanted = list(dict.fromkeys([*columns, "entry_id", heads.CHUNK]))
        table = self._entries(bank_id, latest=False)  # the positions are of the version searched
        if table is None:
            return pa.table({f: [] for f in fields})
        offsets = [row for _, _, row in chunks if row is not None]
        parts = []
        if offsets:
            parts.append(self._on_latest(table, lambda t: _take(self._dataset(t), offsets, wanted)))
        found = _positions(parts)
        lost = sorted({e for e, c, _ in chunks if (e, c) not in found})
        if lost:
            parts.append(self.scan(bank_id, columns=wanted, where=filters.one_of("entry_id", lost)))
            found = _positions(parts)
        order = [found[(e, c)] for e, c, _ in chunks if (e, c) in found]
        rows = pa.concat_tables(parts).select(columns).take(pa.array(order, pa.int64()))
        return rows.rename_columns(list(fields))

    # the entry-level port (`memory.ports.EntryStore`) -----------------------------------

    def entries(self, bank_id: str, flt: EntryFilter | None = None) -> list[Entry]:
        """Return the whole entries `flt` matches (None: every entry), oldest first."""
        if flt is not None and flt.matches_nothing:
            return []
        table = self.scan(bank_id, columns=ENTRY_COLUMNS, where=filters.heads_of(flt))
        return entries_of(bank_id, table.to_pylist())

    def count_entries(self, bank_id: str, flt: EntryFilter | None = None) -> int:
        """Return how many entries `flt` matches (None: every entry)."""
        if flt is not None and flt.matches_nothing:
            return 0
        return self.count(bank_id, filters.heads_of(flt))

    def partition_sizes(self, bank_id: str, flt: EntryFilter | None = None) -> list[PartitionSize]:
        """Return each partition's entry count and token total, largest first (tokens,
        entries, then key), from one projected scan of the entries `flt` matches."""
        if flt is not None and flt.matches_nothing:
            return []
        table = self.scan(bank_id, columns=["key", "token_count"], where=filters.heads_of(flt))
        if table.num_rows == 0:
            return []
        grouped = table.group_by("key").aggregate([("key", "count"), ("token_count", "sum")])
        sizes = [
            PartitionSize(key=str(key), entries=int(entries), tokens=int(tokens))
            for key, entries, tokens in zip(
                grouped.column("key").to_pylist(),
                grouped.column("key_count").to_pylist(),
                grouped.column("token_count_sum").to_pylist(),
                strict=True,
            )
        ]
        sizes.sort(key=lambda s: (-s.tokens, -s.entries, s.key))
        return sizes

    def entry_batches(
        self,
        bank_id: str,
        flt: EntryFilter | None = None,
        *,
        fields: Sequence[str] = ENTRY_FIELDS,
        batch_size: int = 10_000,
        batch_bytes: int | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Yield the entries `flt` matches as Arrow batches, one row per entry, in storage
        order, with only `fields` under their entry names (`ENTRY_FIELDS`, and
        `vectors`: the entry's chunk vectors in chunk order); streams whatever the size.

        Without a filter the first-chunk condition is applied here, in Arrow: it matches most
        rows, and a pushed-down filter makes Lance read the other columns row by row (late
        materialization), 2x the CPU of reading them whole (measured, bench/export.py); with
        a filter (usually selective) it is pushed down with it.
        """
        if flt is not None and flt.matches_nothing:
            return
        columns = heads.columns_of(fields)
        where = filters.where_of(flt)
        if heads.VECTORS in fields:
            dims = self.vector_dims(bank_id)
            if dims is None:
                return
            wanted = [*columns, *(c for c in ("chunk_count",) if c not in columns)]
            chunks = self.scan_batches(
                bank_id,
                columns=[*wanted, heads.CHUNK, "vector"],
                where=where,
                batch_size=batch_size,
                batch_bytes=batch_bytes,
            )
            yield from heads.with_vectors(chunks, fields, dims)
            return
        in_arrow = where is None
        batches = self.scan_batches(
            bank_id,
            columns=[*columns, heads.CHUNK] if in_arrow else columns,
            where=None if in_arrow else filters.heads_of(flt),
            batch_size=batch_size,
            batch_bytes=batch_bytes,
        )
        for batch in batches:
            if in_arrow:
                batch = heads.first_chunks(batch)
                if not batch.num_rows:
                    continue
            yield heads.named(batch, fields)

    def entry_table(
        self,
        bank_id: str,
        flt: EntryFilter | None = None,
        *,
        fields: Sequence[str] = ENTRY_FIELDS,
    ) -> pa.Table:
        """Return the entries `flt` matches as one Arrow table, one row per entry, with only
        `fields` under their entry names (`ENTRY_FIELDS`; not `vectors`).

        Read in one projected scan; without a filter the first-chunk condition is applied
        here, in Arrow (see `entry_batches`: reading a few small columns whole is faster).
        """
        columns = heads.columns_of(fields)
        if heads.VECTORS in fields:
            raise ValueError("entry_table does not return vectors: use entry_batches")
        if flt is not None and flt.matches_nothing:
            table = self.scan(bank_id, columns=columns, where="false")
        elif filters.where_of(flt) is None:
            table = heads.first_chunks_of_table(self.scan(bank_id, columns=[*columns, heads.CHUNK]))
        else:
            table = self.scan(bank_id, columns=columns, where=filters.heads_of(flt))
        return table.rename_columns(dict(zip(columns, fields, strict=True)))


def _take(dataset: Any, offsets: Sequence[int], columns: Sequence[str]) -> pa.Table:
    """Return the rows at `offsets` of `dataset` (those past its end are left out)."""
    rows = dataset.count_rows()
    return dataset.take([o for o in offsets if o < rows], columns=list(columns))


def _positions(parts: Sequence[pa.Table]) -> dict[tuple[str, int], int]:
    """Return the position of each (entry id, chunk number) in the concatenation of `parts`."""
    ids = [i for part in parts for i in part.column("entry_id").to_pylist()]
    chunks = [c for part in parts for c in part.column(heads.CHUNK).to_pylist()]
    return {pair: n for n, pair in enumerate(zip(ids, chunks, strict=True))}
