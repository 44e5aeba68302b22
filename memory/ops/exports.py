"""Export use cases of the API transports: estimate, start (a job), look up, download.

A finished export is a file in the server's export folder, kept with its job; REST
downloads it, MCP reads a JSON one inline. The job runner is the one `memory.ops.jobs`
pool both transports share, so an export started over MCP downloads over REST.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memory.context import Context
from memory.errors import Conflict, InvalidInput, NotFound
from memory.ops import transfer
from memory.ops.jobs import JobRecord, JobRunner
from memory.ops.lab import bank_of
from memory.transfer.export.records import ExportEstimate, ExportFilters, ExportFormat, ExportResult

KIND = "export"
"""The kind of an export's job."""


class ExportRequest(BaseModel):
    """An export to make: a memory bank's configuration and entries, as JSON or Parquet."""

    model_config = ConfigDict(extra="forbid")

    resource_type: Literal["memory_bank"]
    resource_id: str = Field(description="the memory bank's id")
    format: ExportFormat = "json"
    filters: ExportFilters = Field(default_factory=ExportFilters)


@dataclass(frozen=True)
class ExportFile:
    """A finished export's file and what it holds."""

    path: Path
    format: ExportFormat
    resource_id: str
    bytes: int


def estimate(ctx: Context, request: ExportRequest) -> ExportEstimate:
    """Return how many entries the export would hold and about how large its file would be.

    Raises:
        NotFound: an unknown bank.
    """
    return transfer.estimate(ctx, _prepared(ctx, request))


def create(ctx: Context, jobs: JobRunner, folder: Path, request: ExportRequest) -> JobRecord:
    """Check the request, then start the export as a job of the caller's account.

    Raises:
        NotFound: an unknown bank.
        InvalidInput: filters the bank's entries cannot match (checked before the job).
        TooManyJobs: the account has too many jobs queued or running.
    """
    prepared = _prepared(ctx, request)

    def work(record: JobRecord) -> ExportResult:
        folder.mkdir(parents=True, exist_ok=True)  # the server's own folder (not a user's --out)
        path = folder / f"{record.id}.{request.format}"
        record.file = path
        return transfer.export_prepared(ctx, prepared, path)

    details = {"resource_id": prepared.bank.id, "format": request.format}
    return jobs.submit(ctx.account, KIND, work, details, request=request.model_dump(mode="json"))


def write(ctx: Context, request: ExportRequest, path: Path) -> ExportResult:
    """Export now to `path` (a durable job's work, in the process that runs it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return transfer.export_prepared(ctx, _prepared(ctx, request), path)


def _prepared(ctx: Context, request: ExportRequest) -> transfer.PreparedExport:
    """Return the request as a file export of its resolved bank (filters checked)."""
    bank = bank_of(ctx, request.resource_id)
    to_file = transfer.ExportToFile(bank=bank.id, format=request.format, filters=request.filters)
    return transfer.prepared(to_file, bank)


def get(jobs: JobRunner, account: str, export_id: str, wait: float = 0) -> JobRecord:
    """Return the account's export `export_id` (after waiting up to `wait` s for it to finish).

    Raises:
        NotFound: no such export (or a job that is no export, or another account's).
    """
    record = jobs.get(account, export_id)
    if record.kind != KIND:
        raise NotFound(f"no export {export_id!r}")
    jobs.wait(record, wait)
    return record


def result_of(record: JobRecord) -> ExportResult | None:
    """Return what a succeeded export wrote (None before, or when it failed)."""
    return record.result if isinstance(record.result, ExportResult) else None


def download(jobs: JobRunner, account: str, export_id: str, wait: float = 0) -> ExportFile:
    """Return the finished export's file.

    Raises:
        NotFound: no such export.
        Conflict: the export has not succeeded (yet): it is queued, running or failed.
    """
    record = get(jobs, account, export_id, wait)
    if record.status != "succeeded" or record.file is None or not record.file.exists():
        raise Conflict(f"export {export_id} is {record.status}: poll its status until it succeeded")
    return ExportFile(
        path=record.file,
        format=record.details["format"],
        resource_id=record.details["resource_id"],
        bytes=record.file.stat().st_size,
    )


def read_json(
    jobs: JobRunner, account: str, export_id: str, *, wait: float = 0, max_bytes: int
) -> tuple[ExportFile, str]:
    """Return a finished JSON export's file and text, when it is at most `max_bytes`.

    Raises:
        NotFound: no such export.
        Conflict: the export has not succeeded (yet).
        InvalidInput: a Parquet export, or one over `max_bytes`.
    """
    found = download(jobs, account, export_id, wait)
    if found.format != "json":
        raise InvalidInput(f"export {export_id} is {found.format}: only JSON exports read inline")
    if found.bytes > max_bytes:
        raise InvalidInput(
            f"export {export_id} is {found.bytes} bytes, over {max_bytes}: download it from "
            f"GET /authenticated/resource-exports/{export_id}/download, or export less "
            "(filters: key, speaker, tags, since, until)"
        )
    return found, found.path.read_text(encoding="utf-8")
