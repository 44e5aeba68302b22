"""Chunk rows to one row per entry, in Arrow: what `LanceStore.entry_batches`/`entry_table`
hand out, so chunk rows (and storage column names) never leave the store.

An entry's first chunk row (`chunk_index = 0`) carries every entry-level field, its whole
`content` included; `vectors` (the entry's chunk vectors, in chunk order) is gathered from
all its chunk rows, which one write stores next to each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memory.errors import StorageError
from memory.models import ENTRY_FIELDS

CHUNK = "chunk_index"
VECTORS = "vectors"
"""The entry field of its chunk vectors (a list of vectors, one per chunk, in chunk order)."""
COLUMN_OF = {"id": "entry_id"}
"""Entry field names that differ from their storage column (the others are the same)."""
CHUNK_COLUMN_OF = {
    "chunk": CHUNK,
    "chunk_text": "text",
    "carries": "context_id",
    "chunk_vector": "vector",
    "row": "_rowoffset",
}
"""The storage columns of a search's chunk fields (`memory.models.CHUNK_FIELDS`; and the
chunk's vector and its row's position in the version searched, which a hybrid search reads
to score and fetch its hits: `memory.search`)."""


def hit_columns_of(fields: Sequence[str]) -> list[str]:
    """Return the storage columns of a search's fields (entry and chunk fields).

    Raises:
        ValueError: a name is neither an entry-level nor a chunk field.
    """
    entry = [f for f in fields if f not in CHUNK_COLUMN_OF]
    columns = dict(zip(entry, columns_of(entry), strict=True))
    return [CHUNK_COLUMN_OF.get(f) or columns[f] for f in fields]


def columns_of(fields: Sequence[str]) -> list[str]:
    """Return the storage columns of entry fields (VECTORS excluded).

    Raises:
        ValueError: a name is not an entry-level field.
    """
    unknown = [f for f in fields if f not in ENTRY_FIELDS and f != VECTORS]
    if unknown:
        raise ValueError(f"not entry-level fields: {', '.join(unknown)}")
    return [COLUMN_OF.get(f, f) for f in fields if f != VECTORS]


def named(batch: pa.RecordBatch, fields: Sequence[str]) -> pa.RecordBatch:
    """Return the batch's columns of `fields` (as read by `columns_of`) under the field names."""
    columns = [batch.column(COLUMN_OF.get(f, f)) for f in fields]
    return pa.RecordBatch.from_arrays(columns, names=list(fields))


def first_chunks(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Return the batch's chunk-0 rows (one per entry), without the chunk_index column."""
    heads = pc.equal(batch.column(CHUNK), 0)
    batch = batch.drop_columns([CHUNK])
    return batch if pc.all(heads).as_py() else batch.filter(heads)


def first_chunks_of_table(table: pa.Table) -> pa.Table:
    """Return the table's chunk-0 rows (one per entry), without the chunk_index column."""
    heads = pc.equal(table.column(CHUNK), 0)
    table = table.drop_columns([CHUNK])
    return table if pc.all(heads).as_py() else table.filter(heads)


def group_vectors(rows: pa.Table, dims: int) -> tuple[pa.Table, pa.Array, pa.Table]:
    """Split scanned chunk rows into (chunk-0 rows, their chunk-vector lists, left-over rows).

    Every entry's chunk rows are stored next to each other (one write appends them in
    order); rows of an entry not yet complete at the end of a batch are returned to be
    prepended to the next batch.

    Raises:
        StorageError: an entry's chunk rows are not adjacent and in order.
    """
    count = rows.num_rows
    if count == 0:
        empty = pa.array([], pa.list_(pa.list_(pa.float32(), dims)))
        return rows, empty, rows
    chunk_index = rows.column(CHUNK).to_numpy()
    chunk_count = rows.column("chunk_count").to_numpy()
    starts = np.flatnonzero(chunk_index == 0)
    if len(starts) == 0 or starts[0] != 0:
        raise StorageError("an entry's chunk rows are not stored together: run a prune")
    last = int(starts[-1])
    end = count if last + int(chunk_count[last]) <= count else last
    starts = starts[starts < end]
    lengths = np.diff(np.append(starts, end))
    expected = np.arange(end) - np.repeat(starts, lengths)
    if not np.array_equal(lengths, chunk_count[starts]) or not np.array_equal(
        chunk_index[:end], expected
    ):
        raise StorageError("an entry's chunk rows are not stored together: run a prune")
    vector_values = rows.column("vector").slice(0, end).combine_chunks()
    offsets = pa.array(np.append(starts, end).astype(np.int32))
    lists = pa.ListArray.from_arrays(offsets, vector_values)
    return rows.take(pa.array(starts)), lists, rows.slice(end)


def with_vectors(
    batches: Iterable[pa.RecordBatch], fields: Sequence[str], dims: int
) -> Iterator[pa.RecordBatch]:
    """Yield one row per entry of `fields` (VECTORS among them) from streamed chunk rows
    (read with `columns_of(fields)`, chunk_index, chunk_count and vector).

    Raises:
        StorageError: an entry's chunk rows are not adjacent and in order, or incomplete.
    """
    carry: pa.Table | None = None
    for batch in batches:
        rows = pa.Table.from_batches([batch])
        if carry is not None and carry.num_rows:
            rows = pa.concat_tables([carry, rows])
        heads, vectors, carry = group_vectors(rows, dims)
        if heads.num_rows:
            yield _entry_batch(heads, vectors, fields)
    if carry is not None and carry.num_rows:
        heads, vectors, carry = group_vectors(carry, dims)
        if carry.num_rows:
            raise StorageError("an entry's chunk rows are incomplete in storage")
        yield _entry_batch(heads, vectors, fields)


def _entry_batch(heads: pa.Table, vectors: pa.Array, fields: Sequence[str]) -> pa.RecordBatch:
    heads = heads.combine_chunks()
    columns = [
        vectors if f == VECTORS else heads.column(COLUMN_OF.get(f, f)).combine_chunks()
        for f in fields
    ]
    return pa.RecordBatch.from_arrays(columns, names=list(fields))


def best_chunk_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return one chunk row per entry (its best-scoring chunk), by `_score` then entry id,
    from rows of `LanceStore.search` (storage names; `memory.search.best_per_entry` is the
    same over `search_chunks` rows)."""
    best: dict[str, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: (-float(r["_score"]), r.get(CHUNK, 0))):
        best.setdefault(row["entry_id"], row)
    return sorted(best.values(), key=lambda r: (-float(r["_score"]), r["entry_id"]))
