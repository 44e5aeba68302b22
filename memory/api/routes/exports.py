"""Exports: `POST /authenticated/resource-exports` starts one (a job), then poll its status
and download the file (JSON: configuration + entries; Parquet for analysts)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from memory import export
from memory.api.deps import Account, Ctx, State
from memory.api.errors import ApiError, ErrorBody
from memory.api.jobs import JobRecord, TooManyJobs
from memory.api.routes.common import bank_of
from memory.api.schemas import ResourceExport, ResourceExportCreate
from memory.export.records import ExportEstimate, ExportResult

router = APIRouter(prefix="/authenticated/resource-exports", tags=["exports"])
MEDIA = {"json": "application/json", "parquet": "application/vnd.apache.parquet"}
Wait = Annotated[
    float, Query(ge=0, le=30, description="seconds to wait for the export before answering")
]


def _out(record: JobRecord) -> ResourceExport:
    result = record.result if isinstance(record.result, ExportResult) else None
    error = None
    if record.error is not None:
        error = ErrorBody(code=record.error_code or "internal_error", message=record.error)
    base = f"/authenticated/resource-exports/{record.id}"
    return ResourceExport(
        id=record.id,
        resource_type="memory_bank",
        resource_id=record.details["resource_id"],
        format=record.details["format"],
        status=record.status,
        created_at=record.created_at,
        finished_at=record.finished_at,
        entries=result.entries if result else None,
        bytes=result.bytes if result else None,
        status_url=base,
        download_url=f"{base}/download" if result else None,
        error=error,
    )


@router.post("", status_code=202, summary="Create a resource export")
def create_export(
    state: State, ctx: Ctx, body: ResourceExportCreate, wait: Wait = 0
) -> ResourceExport:
    """Export a memory bank (`resource_type: "memory_bank"`, `resource_id`: its id) as `json`
    (default) or `parquet`, with optional filters (key, speaker, tags, since, until)."""
    bank = bank_of(ctx, body.resource_id)
    body.filters.check(bank)
    folder = state.exports_dir

    def work(record: JobRecord) -> ExportResult:
        path = folder / f"{record.id}.{body.format}"
        record.file = path
        return export.export(ctx, bank, body.format, path, body.filters)

    details = {"resource_id": bank.id, "format": body.format}
    try:
        record = state.jobs.submit(ctx.account, "export", work, details)
    except TooManyJobs as exc:
        raise ApiError(429, "too_many_requests", str(exc)) from None
    state.jobs.wait(record, wait)
    return _out(record)


@router.post("/estimate", summary="Estimate a resource export")
def estimate_export(ctx: Ctx, body: ResourceExportCreate) -> ExportEstimate:
    """How many entries an export would hold and about how large its file would be."""
    bank = bank_of(ctx, body.resource_id)
    return export.estimate(ctx, bank, body.format, body.filters)


@router.get("/{export_id}", summary="Get a resource export")
def get_export(state: State, account: Account, export_id: str) -> ResourceExport:
    """The export's status; `download_url` once it succeeded."""
    record = state.jobs.get(account, export_id)
    if record.kind != "export":
        raise ApiError(404, "not_found", f"no export {export_id!r}")
    return _out(record)


@router.get(
    "/{export_id}/download",
    summary="Download a resource export",
    response_class=FileResponse,
    responses={
        200: {"content": {m: {} for m in MEDIA.values()}, "description": "the export file"},
        409: {"description": "the export has not succeeded (yet)"},
    },
)
def download_export(state: State, account: Account, export_id: str) -> FileResponse:
    """The finished file (409 while the export is still running, or when it failed)."""
    record = state.jobs.get(account, export_id)
    if record.kind != "export":
        raise ApiError(404, "not_found", f"no export {export_id!r}")
    if record.status != "succeeded" or record.file is None or not record.file.exists():
        raise ApiError(
            409, "conflict", f"export {export_id} is {record.status}: poll its status_url first"
        )
    fmt = record.details["format"]
    return FileResponse(
        record.file,
        media_type=MEDIA[fmt],
        filename=f"memory-bank-{record.details['resource_id']}.{fmt}",
    )
