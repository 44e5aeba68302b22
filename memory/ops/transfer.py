"""Data in and out of a bank through files: ingest, import a JSON export, export to a file.

The CLI, the Prefect flows and the demo call these; the API transports start their export
jobs in `memory.ops.exports`, which writes through `export_prepared` here. The bank is
resolved once per call (`prepare_export` for an export, so a caller can count its entries
for a progress bar before writing without resolving the bank again).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memory.models import Bank
from memory.ops.banks import get
from memory.transfer import export
from memory.transfer.export import (
    ExportEstimate,
    ExportFilters,
    ExportFormat,
    ExportResult,
    PartitionBy,
)
from memory.transfer.import_json import ImportReport, import_json
from memory.transfer.ingest import DEFAULT_BATCH, IngestReport, OnConflict, ingest

if TYPE_CHECKING:
    from memory.context import Context
    from memory.transfer.export import Progress
    from memory.transfer.ingest.run import Progress as RowProgress

__all__ = [
    "DEFAULT_BATCH",
    "ExportEstimate",
    "ExportFilters",
    "ExportFormat",
    "ExportResult",
    "ExportToFile",
    "ImportReport",
    "ImportRequest",
    "IngestReport",
    "IngestRequest",
    "OnConflict",
    "PartitionBy",
    "PreparedExport",
    "count_entries",
    "estimate",
    "export_file",
    "export_prepared",
    "import_file",
    "ingest_files",
    "prepare_export",
    "prepared",
]


@dataclass(frozen=True)
class IngestRequest:
    """JSONL / CSV / Parquet files (or folders) to ingest into bank `bank` (id or name)."""

    bank: str
    paths: tuple[str, ...]
    rejects: str | None = None
    """One rejects file for every input (default: `<input>.rejects.jsonl` per file)."""
    batch_size: int = DEFAULT_BATCH
    on_conflict: OnConflict = "reject"
    """A row whose id is stored with another key or content: `reject` it (`id_conflict`) or
    `update` the stored entry (its old version deleted for good)."""


@dataclass(frozen=True)
class ImportRequest:
    """A JSON export (`membank export --format json`) to create a new bank from."""

    path: str
    name: str | None = None
    """The new bank's name (None: the exported bank's name)."""


@dataclass(frozen=True)
class ExportToFile:
    """A bank's matching entries to write to `out` as JSON or Parquet."""

    bank: str
    format: ExportFormat
    out: str | None = None
    """The file (or folder, with `partition_by`); None only to estimate."""
    filters: ExportFilters = field(default_factory=ExportFilters)
    with_vectors: bool = False
    partition_by: PartitionBy | None = None


@dataclass(frozen=True)
class PreparedExport:
    """An export whose bank is resolved and whose filters are checked against it."""

    request: ExportToFile
    bank: Bank


def ingest_files(
    ctx: Context, request: IngestRequest, progress: RowProgress | None = None
) -> IngestReport:
    """Ingest the files into the bank; returns the per-file counts (`progress`: rows read,
    and first the files' total rows, so a bar shows the time left).

    Raises:
        NotFound: an unknown bank.
        InvalidInput: a path that is no ingestible file or folder, or a bad rejects path.
    """
    return ingest(
        ctx,
        get(ctx, request.bank),
        list(request.paths),
        rejects=request.rejects,
        batch_size=request.batch_size,
        on_conflict=request.on_conflict,
        progress=progress,
    )


def import_file(
    ctx: Context, request: ImportRequest, progress: Progress | None = None
) -> ImportReport:
    """Create a bank from a JSON export and write its entries (`progress`: entries written).

    Raises:
        InvalidInput: not a membank export, a damaged file, or an entry the bank refuses.
        Conflict: a bank with that name exists.
    """
    return import_json(ctx, request.path, name=request.name, progress=progress)


def prepare_export(ctx: Context, request: ExportToFile) -> PreparedExport:
    """Resolve the export's bank and check its filters against it.

    Raises:
        NotFound: an unknown bank.
        InvalidInput: filters the bank's entries cannot match.
    """
    bank = get(ctx, request.bank)
    request.filters.check(bank)
    return PreparedExport(request, bank)


def prepared(request: ExportToFile, bank: Bank) -> PreparedExport:
    """Return the export of an already resolved bank (its filters checked against it)."""
    request.filters.check(bank)
    return PreparedExport(request, bank)


def count_entries(ctx: Context, export_of: PreparedExport) -> int:
    """Return how many entries the export will write."""
    return export.count_entries(ctx, export_of.bank, export_of.request.filters)


def estimate(ctx: Context, export_of: PreparedExport) -> ExportEstimate:
    """Return how many entries the export would hold and about how large it would be."""
    request = export_of.request
    return export.estimate(
        ctx, export_of.bank, request.format, request.filters, with_vectors=request.with_vectors
    )


def export_prepared(
    ctx: Context,
    export_of: PreparedExport,
    out: str | Path | None = None,
    progress: Progress | None = None,
) -> ExportResult:
    """Write the export to `out` (None: the request's `out`); returns what was written.

    Raises:
        InvalidInput: no file to write to, or one that cannot be written.
    """
    from memory.errors import InvalidInput

    request = export_of.request
    target = out if out is not None else request.out
    if target is None:
        raise InvalidInput("an export needs a file to write: give --out PATH")
    return export.export(
        ctx,
        export_of.bank,
        request.format,
        target,
        request.filters,
        with_vectors=request.with_vectors,
        partition_by=request.partition_by,
        progress=progress,
    )


def export_file(ctx: Context, request: ExportToFile) -> ExportResult:
    """Resolve the bank and write the export (`prepare_export`, then `export_prepared`)."""
    return export_prepared(ctx, prepare_export(ctx, request))
