"""Streaming reads of a bank for exports: the matching entries in storage order, one row per
entry, in bounded batches (`EntryStore.entry_batches`)."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from memory.models import Bank
from memory.transfer.export.records import ExportFilters

if TYPE_CHECKING:
    from memory.context import Context

SCAN_BATCH = 65_536
SCAN_BYTES = 32 * 1024 * 1024
"""A scanned batch holds at most SCAN_BATCH entries and about SCAN_BYTES bytes: memory
stays bounded whatever the bank's size and its entries' sizes."""


def scan(
    ctx: Context, bank: Bank, flt: ExportFilters, fields: Sequence[str], *, size: int
) -> Generator[pa.RecordBatch, None, None]:
    """Yield the matching entries (only `fields`, entry field names; `vectors`: each entry's
    chunk vectors) in storage order, at most `size` a batch (closing it ends the read)."""
    yield from ctx.store.entry_batches(
        bank.id, flt.entry_filter(), fields=fields, batch_size=size, batch_bytes=SCAN_BYTES
    )
