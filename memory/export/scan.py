"""Streaming scans of a bank for exports: matching rows in storage order, bounded batches."""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from memory.export.records import ExportFilters
from memory.models import Bank
from memory.store import filters

if TYPE_CHECKING:
    from memory.context import Context

SCAN_BATCH = 65_536
SCAN_BYTES = 32 * 1024 * 1024
"""A scanned batch holds at most SCAN_BATCH entries and about SCAN_BYTES bytes: memory
stays bounded whatever the bank's size and its entries' sizes."""


def scan(
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
        columns=columns,
        where=predicate,
        batch_size=size,
        batch_bytes=SCAN_BYTES,
    )
    if not in_arrow:
        yield from batches
        return
    for batch in batches:
        heads = first_chunks(batch)
        if heads.num_rows:
            yield heads


def _chunk_zero(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Return the batch's chunk-0 rows (one per entry), without the chunk_index column."""
    heads = pc.equal(batch.column("chunk_index"), 0)
    batch = batch.drop_columns(["chunk_index"])
    return batch if pc.all(heads).as_py() else batch.filter(heads)


def first_chunks(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Return the batch's chunk-0 rows (one per entry), without the chunk_index column."""
    heads = pc.equal(batch.column("chunk_index"), 0)
    batch = batch.drop_columns(["chunk_index"])
    return batch if pc.all(heads).as_py() else batch.filter(heads)
