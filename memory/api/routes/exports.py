"""Exports: `POST /authenticated/resource-exports` starts one (a job), then poll its status
and download the file (JSON: configuration + entries; Parquet for analysts)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from memory.api.deps import Account, Ctx, Key, State
from memory.api.schemas import EXPORTS_PATH, ResourceExport, ResourceExportCreate, export_out
from memory.api.scopes import allow_bank
from memory.ops import exports
from memory.transfer.export.records import ExportEstimate

router = APIRouter(prefix=EXPORTS_PATH, tags=["exports"])
MEDIA = {"json": "application/json", "parquet": "application/vnd.apache.parquet"}
Wait = Annotated[
    float, Query(ge=0, le=30, description="seconds to wait for the export before answering")
]


@router.post("", status_code=202, summary="Create a resource export")
def create_export(
    state: State, ctx: Ctx, key: Key, body: ResourceExportCreate, wait: Wait = 0
) -> ResourceExport:
    """Export a memory bank (`resource_type: "memory_bank"`, `resource_id`: its id) as `json`
    (default) or `parquet`, with optional filters (key, speaker, tags, since, until)."""
    allow_bank(key, ctx, body.resource_id)
    record = exports.create(ctx, state.jobs, state.exports_dir, body)
    return export_out(exports.get(state.jobs, ctx.account, record.id, wait))


@router.post("/estimate", summary="Estimate a resource export")
def estimate_export(ctx: Ctx, key: Key, body: ResourceExportCreate) -> ExportEstimate:
    """How many entries an export would hold and about how large its file would be."""
    allow_bank(key, ctx, body.resource_id)
    return exports.estimate(ctx, body)


@router.get("/{export_id}", summary="Get a resource export")
def get_export(state: State, account: Account, export_id: str) -> ResourceExport:
    """The export's status; `download_url` once it succeeded."""
    return export_out(exports.get(state.jobs, account, export_id))


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
    found = exports.download(state.jobs, account, export_id)
    return FileResponse(
        found.path,
        media_type=MEDIA[found.format],
        filename=f"memory-bank-{found.resource_id}.{found.format}",
    )
