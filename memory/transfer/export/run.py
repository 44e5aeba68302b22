"""Export a bank: one JSON file (configuration + entries) or Parquet for analysts.

Both stream the bank in batches from a projected scan (vectors only when asked for), so
memory stays bounded whatever the bank's size, and both write to a temporary sibling that
is renamed into place at the end: a failed export leaves no partial file behind. Deleted
entries are gone from storage, so they never appear.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from memory import banks
from memory.errors import InvalidInput
from memory.models import Bank
from memory.transfer.export.files import atomic_dir, atomic_file
from memory.transfer.export.json_file import is_json_export, json_overhead, write_json
from memory.transfer.export.parquet import (
    PARQUET_SCHEMA_VERSION,
    is_export_file,
    is_export_folder,
    parquet_batches,
    parquet_schema,
    write_partitioned,
    write_single,
)
from memory.transfer.export.records import (
    ExportEstimate,
    ExportFilters,
    ExportFormat,
    ExportResult,
    PartitionBy,
    Progress,
    header,
    json_header,
)
from memory.transfer.export.scan import SCAN_BATCH, scan

if TYPE_CHECKING:
    from memory.context import Context

PARQUET_OVERHEAD = 4_500
"""Bytes of a Parquet export that do not grow with its entries: schema, column metadata and
footer (measured: about 4.3 kB for a few entries)."""
_STRING_COLUMNS = ("key", "kind", "speaker", "role", "memory_type", "content")
_TEXT_COLUMNS = ("metadata", "attachments")
_LIST_COLUMNS = ("tags", "summary_of")


def export(
    ctx: Context,
    bank: Bank,
    fmt: ExportFormat,
    out: str | Path,
    flt: ExportFilters | None = None,
    *,
    with_vectors: bool = False,
    partition_by: PartitionBy | None = None,
    progress: Progress | None = None,
    batch_size: int = SCAN_BATCH,
) -> ExportResult:
    """Export the bank's matching entries to `out`; returns what was written.

    Args:
        ctx: the context.
        bank: the bank to export.
        fmt: `json` (configuration + entries, importable) or `parquet` (for analysts).
        out: the file to write (a folder when `partition_by` is set).
        flt: which entries; default every entry.
        with_vectors: Parquet only: add each entry's chunk vectors.
        partition_by: Parquet only: a hive-partitioned folder by `date` or `key`.
        progress: called with the number of entries written since the previous call.
        batch_size: entries read per batch (bounds memory).

    Raises:
        InvalidInput: options that do not fit the format, an empty time frame, or an `out`
            that cannot be written (a file where a folder is needed, no permission) or is
            unsafe to replace.
        StorageError: writing failed midway (disk full, file too large); the previous file
            at `out` is kept.
    """
    flt = flt or ExportFilters()
    flt.check(bank)
    path = Path(out)
    if fmt == "json":
        if with_vectors or partition_by:
            raise InvalidInput("--with-vectors and --partition-by apply to Parquet exports only")
        with atomic_file(path, is_json_export, "JSON") as temp:
            count = write_json(ctx, bank, temp, flt, progress, batch_size)
        return ExportResult(format=fmt, path=str(path), entries=count, bytes=_size(path), files=1)
    if fmt != "parquet":
        raise InvalidInput(f"unknown export format {fmt!r}: use json or parquet")
    counter = _Counter(progress)
    schema = parquet_schema(
        banks.vector_dims(ctx, bank),
        with_vectors=with_vectors,
        partition_by=partition_by,
        metadata=header(ctx, bank, flt, "membank.parquet", PARQUET_SCHEMA_VERSION),
    )
    batches = counter.wrap(
        parquet_batches(ctx, bank, flt, schema, with_vectors=with_vectors, size=batch_size)
    )
    # closing: a failed export ends its scan at once (the scan holds the table's read lock)
    with closing(batches):
        if partition_by is None:
            with atomic_file(path, is_export_file, "Parquet") as temp:
                write_single(temp, schema, batches)
            files = 1
        else:
            with atomic_dir(path, is_export_folder) as temp:
                write_partitioned(temp, schema, batches, partition_by)
            files = sum(1 for p in path.rglob("*.parquet"))
    return ExportResult(
        format=fmt,
        path=str(path),
        entries=counter.total,
        bytes=_size(path),
        files=files,
        partition_by=partition_by,
        with_vectors=with_vectors,
    )


def count_entries(ctx: Context, bank: Bank, flt: ExportFilters | None = None) -> int:
    """Return how many entries match the filters."""
    flt = flt or ExportFilters()
    flt.check(bank)
    return ctx.store.count_entries(bank.id, flt.entry_filter())


def estimate(
    ctx: Context,
    bank: Bank,
    fmt: ExportFormat,
    flt: ExportFilters | None = None,
    *,
    with_vectors: bool = False,
) -> ExportEstimate:
    """Return the entry count and approximate size of an export, without writing anything.

    The text sizes are summed from a projected scan (no vectors read); JSON adds its
    per-entry field names; Parquet is the uncompressed data plus PARQUET_OVERHEAD (compression
    makes a large file smaller than the estimate).
    """
    flt = flt or ExportFilters()
    flt.check(bank)
    dims = banks.vector_dims(ctx, bank)
    columns = [*_STRING_COLUMNS, *_TEXT_COLUMNS, *_LIST_COLUMNS, "chunk_count"]
    entries = text = items = chunks = 0
    for batch in scan(ctx, bank, flt, columns, size=SCAN_BATCH):
        entries += batch.num_rows
        for name in (*_STRING_COLUMNS, *_TEXT_COLUMNS):
            text += _bytes(batch.column(name))
        for name in _LIST_COLUMNS:
            flat = pc.list_flatten(batch.column(name))
            text += _bytes(flat)
            items += len(flat)
        chunks += int(pc.sum(batch.column("chunk_count")).as_py() or 0)
    if fmt == "json":
        if with_vectors:
            raise InvalidInput("--with-vectors applies to Parquet exports only")
        header = len(json.dumps(json_header(ctx, bank, flt), ensure_ascii=False)) + 64
        size = header + entries * json_overhead() + text + items * 4
        note = "JSON file size, approximate"
    else:
        size = PARQUET_OVERHEAD + text + entries * 64 + (chunks * dims * 4 if with_vectors else 0)
        note = (
            "uncompressed data plus the file's schema and footer; compression makes "
            "a large Parquet file smaller than this"
        )
    return ExportEstimate(
        format=fmt, entries=entries, bytes=size, with_vectors=with_vectors, note=note
    )


def _bytes(column: pa.Array | pa.ChunkedArray) -> int:
    if len(column) == 0:
        return 0
    return int(pc.sum(pc.binary_length(column)).as_py() or 0)


class _Counter:
    """Counts the rows of the batches passing through and reports progress."""

    def __init__(self, progress: Progress | None) -> None:
        self.total = 0
        self.progress = progress

    def wrap(self, batches: Iterator[pa.RecordBatch]) -> Generator[pa.RecordBatch, None, None]:
        """Yield `batches` unchanged, counting their rows."""
        for batch in batches:
            self.total += batch.num_rows
            if self.progress and batch.num_rows:
                self.progress(batch.num_rows)
            yield batch


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size
