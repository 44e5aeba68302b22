"""The Parquet export: a stable, documented, one-row-per-entry schema, streamed in batches.

Schema version 1 (docs/export-schema.md): bank_id, id, key, kind, speaker, role,
memory_type, content, tags, metadata (JSON text), attachments (JSON text), summary_of,
created_at (UTC), token_count, chunk_count, and `vectors` (the entry's chunk vectors,
in chunk order) only when asked for. A partitioned export adds a hive partition column:
`date` (UTC day of created_at) or `partition_key` (the key).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Generator, Iterator
from contextlib import closing
from functools import lru_cache
from pathlib import Path
from queue import Full, Queue
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memory.models import Bank
from memory.store.schema import TIMESTAMP
from memory.transfer.export.records import ExportFilters, PartitionBy
from memory.transfer.export.scan import scan

if TYPE_CHECKING:
    from memory.context import Context

PARQUET_SCHEMA_VERSION = 1
ROW_GROUP_ROWS = 262_144
ROW_GROUP_BYTES = 128 * 1024 * 1024
"""A row group is written when either bound is reached (memory stays bounded by it)."""
PLAIN_COLUMNS = ("id", "content", "created_at", "vectors")
"""Columns of (nearly) unique values: dictionary encoding would only be tried and dropped."""
NO_STATISTICS = ("id", "content", "metadata", "attachments", "vectors")
"""Columns whose min/max statistics help no reader (long text, JSON, vectors)."""
METADATA_KEY = b"membank.export"
PREFETCH_BATCHES = 4
"""Scanned batches read ahead of the writer: a row group of full 64k-entry batches, so the
scan is not held up while a row group is written (memory: at most 4 scanned batches)."""
T = TypeVar("T")
PARTITION_COLUMNS: dict[str, str] = {"date": "date", "key": "partition_key"}

_BASE_FIELDS = [
    pa.field("bank_id", pa.string(), nullable=False),
    pa.field("id", pa.string(), nullable=False),
    pa.field("key", pa.string(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
    pa.field("speaker", pa.string()),
    pa.field("role", pa.string()),
    pa.field("memory_type", pa.string()),
    pa.field("content", pa.string(), nullable=False),
    pa.field("tags", pa.list_(pa.string())),
    pa.field("metadata", pa.string()),
    pa.field("attachments", pa.string()),
    pa.field("summary_of", pa.list_(pa.string())),
    pa.field("created_at", TIMESTAMP, nullable=False),
    pa.field("token_count", pa.int32(), nullable=False),
    pa.field("chunk_count", pa.int32(), nullable=False),
]
SCAN_COLUMNS = [f.name for f in _BASE_FIELDS if f.name != "bank_id"]
"""Entry fields an export reads (never the vectors unless asked)."""


def parquet_schema(
    dims: int,
    *,
    with_vectors: bool,
    partition_by: PartitionBy | None,
    metadata: dict[str, Any],
) -> pa.Schema:
    """Return the export schema, carrying the bank's configuration in its metadata."""
    fields = list(_BASE_FIELDS)
    if with_vectors:
        fields.append(pa.field("vectors", pa.list_(pa.list_(pa.float32(), dims))))
    if partition_by == "date":
        fields.append(pa.field("date", pa.date32(), nullable=False))
    elif partition_by == "key":
        fields.append(pa.field("partition_key", pa.string(), nullable=False))
    encoded = json.dumps(metadata, ensure_ascii=False, default=str).encode("utf-8")
    return pa.schema(fields, metadata={METADATA_KEY: encoded})


def to_export_batch(
    rows: pa.RecordBatch | pa.Table,
    bank_id: str,
    schema: pa.Schema,
    vectors: pa.Array | None = None,
) -> pa.RecordBatch:
    """Return entry rows (`EntryStore.entry_batches`) as a batch of the export schema.

    The scanned columns already have the export's types, so they are passed through
    (no cast, no copy); only `bank_id` and the partition columns are built.
    """
    if isinstance(rows, pa.Table):
        rows = rows.combine_chunks()
    count = rows.num_rows
    arrays: list[Any] = []
    for field in schema:
        name = field.name
        if name == "bank_id":
            arrays.append(_repeated(bank_id, count))
        elif name == "vectors":
            arrays.append(vectors)
        elif name == "date":
            arrays.append(pc.cast(rows.column("created_at"), pa.date32()))
        elif name == "partition_key":
            arrays.append(rows.column("key"))
        else:
            arrays.append(rows.column(name))
    plain = schema.remove_metadata()
    if isinstance(rows, pa.RecordBatch):
        return pa.RecordBatch.from_arrays(arrays, schema=plain)
    table = pa.Table.from_arrays(arrays, schema=plain).combine_chunks()
    return table.to_batches()[0] if table.num_rows else pa.RecordBatch.from_pylist([], plain)


@lru_cache(maxsize=8)
def _repeated(value: str, count: int) -> pa.Array:
    """Return `value` repeated `count` times (cached: most scanned batches share a size)."""
    return pa.array([value], pa.string()).take(np.zeros(count, np.int32))


def write_single(path: Path, schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> None:
    """Stream `batches` into one Parquet file at `path`, in row groups of bounded size.

    Batches are produced in a background thread (`prefetch`), up to about a row group
    ahead, so reading the next row group overlaps with encoding and writing this one.
    """
    import pyarrow.parquet as pq

    pending: list[pa.RecordBatch] = []
    rows = size = 0
    options = writer_options(schema)
    with (
        pq.ParquetWriter(path, schema, **options) as writer,
        closing(prefetch(batches, PREFETCH_BATCHES)) as stream,
    ):
        for batch in stream:
            if not batch.num_rows:
                continue
            pending.append(batch)
            rows, size = rows + batch.num_rows, size + batch.nbytes
            if rows >= ROW_GROUP_ROWS or size >= ROW_GROUP_BYTES:
                writer.write_table(pa.Table.from_batches(pending), row_group_size=rows)
                pending, rows, size = [], 0, 0
        if pending:
            writer.write_table(pa.Table.from_batches(pending), row_group_size=rows)


def writer_options(schema: pa.Schema) -> dict[str, Any]:
    """Return the Parquet writer settings: dictionaries and statistics where they pay off."""
    names = schema.names
    return {
        "use_dictionary": [n for n in names if n not in PLAIN_COLUMNS],
        "write_statistics": [n for n in names if n not in NO_STATISTICS],
    }


def prefetch(items: Iterator[T], depth: int = 2) -> Generator[T, None, None]:
    """Yield `items` while a background thread produces the next ones (at most `depth` ahead).

    An error in the producer is raised here; stopping early stops the producer.
    """
    queue: Queue[tuple[str, Any]] = Queue(maxsize=depth)
    stop = threading.Event()

    def put(message: tuple[str, Any]) -> bool:
        while not stop.is_set():
            try:
                queue.put(message, timeout=0.1)
                return True
            except Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(("item", item)):
                    return
            put(("end", None))
        except BaseException as exc:  # handed to the consumer, which raises it
            put(("error", exc))
        finally:  # stopped early: close the source now (a scan releases its read lock)
            close = getattr(items, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="membank-export-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = queue.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        thread.join()


def write_partitioned(
    path: Path,
    schema: pa.Schema,
    batches: Iterator[pa.RecordBatch],
    partition_by: PartitionBy,
) -> None:
    """Stream `batches` into a hive-partitioned Parquet dataset folder at `path`."""
    import pyarrow.dataset as pds

    parquet_format = pds.ParquetFileFormat()
    pds.write_dataset(
        batches,
        str(path),
        schema=schema,
        format=parquet_format,
        file_options=parquet_format.make_write_options(**writer_options(schema)),
        partitioning=[PARTITION_COLUMNS[partition_by]],
        partitioning_flavor="hive",
        basename_template="part-{i}.parquet",
        max_partitions=1 << 30,
        max_open_files=256,
        existing_data_behavior="error",
    )


def is_export_file(path: Path) -> bool:
    """Return True when `path` is a Parquet file carrying a membank export's schema metadata."""
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_schema(path).metadata or {}
    except (OSError, ValueError):
        return False
    return METADATA_KEY in metadata


def is_export_folder(path: Path) -> bool:
    """Return True when `path` is empty or holds only Parquet files of a membank export."""
    files = [p for p in path.rglob("*") if p.is_file()]
    if not files:
        return True
    if any(p.suffix != ".parquet" for p in files):
        return False
    return is_export_file(files[0])


def parquet_batches(
    ctx: Context,
    bank: Bank,
    flt: ExportFilters,
    schema: pa.Schema,
    *,
    with_vectors: bool,
    size: int,
) -> Generator[pa.RecordBatch, None, None]:
    fields = [*SCAN_COLUMNS, "vectors"] if with_vectors else SCAN_COLUMNS
    for batch in scan(ctx, bank, flt, fields, size=size):
        vectors = batch.column("vectors") if with_vectors else None
        yield to_export_batch(batch, bank.id, schema, vectors)
