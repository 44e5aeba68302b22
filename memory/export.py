"""Export a bank: one JSON file (configuration + entries) or Parquet for analysts.

Both stream the bank in batches from a projected scan (vectors only when asked for), so
memory stays bounded whatever the bank's size, and both write to a temporary sibling that
is renamed into place at the end: a failed export leaves no partial file behind. Deleted
entries are gone from storage, so they never appear. The JSON layout keeps one entry per
line so `memory.importer` can stream it back (docs/export-schema.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field

from memory import banks, validation
from memory.context import Context
from memory.errors import InvalidInput, StorageError
from memory.export_files import atomic_dir, atomic_file
from memory.export_parquet import (
    PARQUET_SCHEMA_VERSION,
    SCAN_COLUMNS,
    PartitionBy,
    group_vectors,
    is_export_file,
    is_export_folder,
    parquet_schema,
    to_export_batch,
    write_partitioned,
    write_single,
)
from memory.models import Bank
from memory.store import filters

JSON_FORMAT = "membank.export"
JSON_SCHEMA_VERSION = 1
"""Version of the JSON export layout; importers accept this version and older."""
PARQUET_OVERHEAD = 4_500
"""Bytes of a Parquet export that do not grow with its entries: schema, column metadata and
footer (measured: about 4.3 kB for a few entries)."""
HEADER_LIMIT = 1024 * 1024
"""Bytes of a JSON export's first line read to recognise it (its header: format, bank)."""
SCAN_BATCH = 65_536
SCAN_BYTES = 32 * 1024 * 1024
"""A scanned batch holds at most SCAN_BATCH entries and about SCAN_BYTES bytes: memory
stays bounded whatever the bank's size and its entries' sizes."""
ExportFormat = Literal["json", "parquet"]
Progress = Callable[[int], None]

_STRING_COLUMNS = ("key", "kind", "speaker", "role", "memory_type", "content")
_TEXT_COLUMNS = ("metadata", "attachments")
_LIST_COLUMNS = ("tags", "summary_of")


class ExportFilters(BaseModel):
    """Which entries to export: every given filter must match."""

    model_config = ConfigDict(extra="forbid")

    key: str | None = None
    speaker: str | None = None
    tags: list[str] = Field(default_factory=list)
    """An entry must carry every one of these tags."""
    since: datetime | None = None
    """Entries created at or after this time."""
    until: datetime | None = None
    """Entries created before this time (exclusive)."""

    def check(self, bank: Bank) -> None:
        """Raise InvalidInput when the time frame is empty (since not before until), for a
        speaker filter on a general bank (its entries have no speaker), or for a label no
        entry can hold (see `validation.check_filters`)."""
        validation.check_filters(bank, key=self.key, speaker=self.speaker, tags=self.tags)
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise InvalidInput(
                f"--since ({self.since:%Y-%m-%d %H:%M}) must be before --until "
                f"({self.until:%Y-%m-%d %H:%M}): the time frame is empty"
            )

    def predicate(self) -> str | None:
        """Return the escaped storage filter for these conditions (None = everything)."""
        return filters.entry_filter(
            key=self.key, tags=self.tags, speaker=self.speaker, since=self.since, until=self.until
        )


class ExportEstimate(BaseModel):
    """What an export would write: entry count and approximate size, before running it."""

    format: ExportFormat
    entries: int
    bytes: int
    with_vectors: bool = False
    note: str


class ExportResult(BaseModel):
    """What an export wrote."""

    format: ExportFormat
    path: str
    entries: int
    bytes: int
    """Size on disk of the file (or of every file of a partitioned dataset)."""
    files: int
    partition_by: PartitionBy | None = None
    with_vectors: bool = False


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
            count = _write_json(ctx, bank, temp, flt, progress, batch_size)
        return ExportResult(format=fmt, path=str(path), entries=count, bytes=_size(path), files=1)
    if fmt != "parquet":
        raise InvalidInput(f"unknown export format {fmt!r}: use json or parquet")
    counter = _Counter(progress)
    schema = parquet_schema(
        banks.vector_dims(ctx, bank),
        with_vectors=with_vectors,
        partition_by=partition_by,
        metadata=_header(ctx, bank, flt, "membank.parquet", PARQUET_SCHEMA_VERSION),
    )
    batches = counter.wrap(
        _parquet_batches(ctx, bank, flt, schema, with_vectors=with_vectors, size=batch_size)
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


def is_json_export(path: Path) -> bool:
    """Return True when `path` starts as `export` writes a JSON export: a header line with
    `"format": "membank.export"`, then the line opening the entries list."""
    try:
        with path.open("rb") as handle:
            first, second = handle.readline(HEADER_LIMIT), handle.readline(64)
        header = json.loads(first.decode("utf-8").rstrip().removesuffix(",") + "}")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return (
        isinstance(header, dict)
        and header.get("format") == JSON_FORMAT
        and second.strip() == b'"entries": ['
    )


def count_entries(ctx: Context, bank: Bank, flt: ExportFilters | None = None) -> int:
    """Return how many entries match the filters."""
    flt = flt or ExportFilters()
    flt.check(bank)
    where = filters.conjoin("chunk_index = 0", flt.predicate())
    return ctx.store.count(bank.id, banks.vector_dims(ctx, bank), where)


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
    for batch in _scan(ctx, bank, flt, columns, chunk_zero=True, size=SCAN_BATCH):
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
        header = len(json.dumps(_json_header(ctx, bank, flt), ensure_ascii=False)) + 64
        size = header + entries * _json_overhead() + text + items * 4
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


def _json_overhead() -> int:
    template = {
        "id": "0" * 32,
        "key": "",
        "kind": "",
        "speaker": "",
        "role": "",
        "memory_type": "",
        "content": "",
        "tags": [],
        "metadata": "",
        "attachments": "",
        "summary_of": [],
        "created_at": datetime(2026, 1, 1, tzinfo=UTC).isoformat(),
        "token_count": 100,
    }
    return len(json.dumps(template, ensure_ascii=False)) + 2


def _scan(
    ctx: Context,
    bank: Bank,
    flt: ExportFilters,
    columns: list[str],
    *,
    chunk_zero: bool,
    size: int,
) -> Generator[pa.RecordBatch, None, None]:
    """Yield the matching rows (only chunk 0 of each entry with `chunk_zero`) in storage order.

    `chunk_index = 0` matches most rows, and a pushed-down filter makes Lance read the other
    columns row by row (late materialization): 2x the CPU of reading them whole, measured.
    So without another filter it is applied here, in Arrow; with one (usually selective),
    it is pushed down with it.
    """
    predicate = flt.predicate()
    in_arrow = chunk_zero and predicate is None
    if in_arrow:
        columns = [*columns, "chunk_index"]
    elif chunk_zero:
        predicate = filters.conjoin("chunk_index = 0", predicate)
    batches = ctx.store.scan_batches(
        bank.id,
        banks.vector_dims(ctx, bank),
        columns=columns,
        where=predicate,
        batch_size=size,
        batch_bytes=SCAN_BYTES,
    )
    if not in_arrow:
        yield from batches
        return
    for batch in batches:
        heads = _chunk_zero(batch)
        if heads.num_rows:
            yield heads


def _chunk_zero(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Return the batch's chunk-0 rows (one per entry), without the chunk_index column."""
    heads = pc.equal(batch.column("chunk_index"), 0)
    batch = batch.drop_columns(["chunk_index"])
    return batch if pc.all(heads).as_py() else batch.filter(heads)


def _json_header(ctx: Context, bank: Bank, flt: ExportFilters) -> dict[str, Any]:
    return _header(ctx, bank, flt, JSON_FORMAT, JSON_SCHEMA_VERSION)


def _header(ctx: Context, bank: Bank, flt: ExportFilters, fmt: str, version: int) -> dict[str, Any]:
    """Return what an export says about itself: format, version, time, bank, filters."""
    return {
        "format": fmt,
        "version": version,
        "exported_at": ctx.clock.now().astimezone(UTC).isoformat(),
        "bank": bank.model_dump(mode="json"),
        "filters": flt.model_dump(mode="json"),
    }


def _write_json(
    ctx: Context,
    bank: Bank,
    path: Path,
    flt: ExportFilters,
    progress: Progress | None,
    size: int,
) -> int:
    count = 0
    batches = _scan(ctx, bank, flt, SCAN_COLUMNS, chunk_zero=True, size=size)
    with path.open("w", encoding="utf-8") as out, closing(batches):
        header = json.dumps(_json_header(ctx, bank, flt), ensure_ascii=False)
        out.write(header[:-1] + ",\n" + '"entries": [\n')
        for batch in batches:
            lines = [json.dumps(entry_record(r), ensure_ascii=False) for r in batch.to_pylist()]
            if not lines:
                continue
            out.write((",\n" if count else "") + ",\n".join(lines))
            count += len(lines)
            if progress:
                progress(len(lines))
        out.write(f'\n],\n"entry_count": {count}\n}}\n')
    return count


def entry_record(row: dict[str, Any]) -> dict[str, Any]:
    """Return the JSON export record of a chunk-0 row (the Entry fields but bank_id)."""
    created: datetime = row["created_at"]
    created = created.replace(tzinfo=UTC) if created.tzinfo is None else created.astimezone(UTC)
    return {
        "id": row["entry_id"],
        "key": row["key"],
        "kind": row["kind"],
        "speaker": row["speaker"],
        "role": row["role"],
        "memory_type": row["memory_type"],
        "content": row["content"],
        "tags": row["tags"] or [],
        "metadata": json.loads(row["metadata"] or "{}"),
        "attachments": json.loads(row["attachments"] or "[]"),
        "summary_of": row["summary_of"] or [],
        "created_at": created.isoformat(),
        "token_count": row["token_count"],
    }


def _parquet_batches(
    ctx: Context,
    bank: Bank,
    flt: ExportFilters,
    schema: pa.Schema,
    *,
    with_vectors: bool,
    size: int,
) -> Generator[pa.RecordBatch, None, None]:
    if not with_vectors:
        for batch in _scan(ctx, bank, flt, SCAN_COLUMNS, chunk_zero=True, size=size):
            yield to_export_batch(batch, bank.id, schema)
        return
    dims = banks.vector_dims(ctx, bank)
    columns = [*SCAN_COLUMNS, "chunk_index", "vector"]
    carry: pa.Table | None = None
    for batch in _scan(ctx, bank, flt, columns, chunk_zero=False, size=size):
        rows = pa.Table.from_batches([batch])
        if carry is not None and carry.num_rows:
            rows = pa.concat_tables([carry, rows])
        heads, vectors, carry = group_vectors(rows, dims)
        if heads.num_rows:
            yield to_export_batch(heads, bank.id, schema, vectors)
    if carry is not None and carry.num_rows:
        heads, vectors, carry = group_vectors(carry, dims)
        if carry.num_rows:
            raise StorageError("an entry's chunk rows are incomplete in storage")
        yield to_export_batch(heads, bank.id, schema, vectors)


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
