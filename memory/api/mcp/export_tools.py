"""Export tools: start an export (a job of the server's pool, like the REST endpoint), poll
it, and read a finished JSON export back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from memory import export
from memory.api.jobs import TooManyJobs
from memory.api.mcp.bank_tools import bank_of
from memory.api.mcp.inputs import ExportRef, StartExport
from memory.api.routes.exports import _out
from memory.api.schemas import ResourceExport
from memory.api.state import ApiState
from memory.context import Context
from memory.errors import Conflict, InvalidInput, NotFound
from memory.export.records import ExportResult

MAX_INLINE = 1_000_000
"""Largest JSON export `read_resource_export` hands back inline, in bytes."""


class ExportContent(BaseModel):
    """A finished JSON export's text: the bank's configuration, then its entries."""

    id: str
    format: str
    bytes: int
    content: str = Field(description="The export file: one JSON document (bank, entries).")


def create_resource_export(ctx: Context, args: StartExport, state: ApiState) -> ResourceExport:
    """Export a memory bank (resource_type "memory_bank"): its configuration and entries as
    JSON, or Parquet; returns the export job (poll get_resource_export until it succeeded)."""
    bank = bank_of(ctx, args.resource_id)
    args.filters.check(bank)
    folder = state.exports_dir

    def work(record: Any) -> ExportResult:
        path = folder / f"{record.id}.{args.format}"
        record.file = path
        return export.export(ctx, bank, args.format, path, args.filters)

    try:
        record = state.jobs.submit(
            ctx.account, "export", work, {"resource_id": bank.id, "format": args.format}
        )
    except TooManyJobs as exc:
        raise ToolError(f"too many jobs: {exc}") from None
    state.jobs.wait(record, args.wait)
    return _out(record)


def _export_job(ctx: Context, state: ApiState, export_id: str) -> Any:
    record = state.jobs.get(ctx.account, export_id)
    if record.kind != "export":
        raise NotFound(f"no export {export_id!r}")
    return record


def get_resource_export(ctx: Context, args: ExportRef, state: ApiState) -> ResourceExport:
    """Return an export's status (queued, running, succeeded, failed) and, once done, its size."""
    state.jobs.wait(_export_job(ctx, state, args.export_id), args.wait)
    return _out(_export_job(ctx, state, args.export_id))


def read_resource_export(ctx: Context, args: ExportRef, state: ApiState) -> ExportContent:
    """Return a finished JSON export's content (up to 1 MB; larger ones: download over REST)."""
    record = _export_job(ctx, state, args.export_id)
    state.jobs.wait(record, args.wait)
    if record.status != "succeeded" or record.file is None or not record.file.exists():
        raise Conflict(f"export {args.export_id} is {record.status}: poll get_resource_export")
    fmt = record.details["format"]
    size = record.file.stat().st_size
    if fmt != "json":
        raise InvalidInput(f"export {args.export_id} is {fmt}: only JSON exports read inline")
    if size > MAX_INLINE:
        raise InvalidInput(
            f"export {args.export_id} is {size} bytes, over {MAX_INLINE}: download it from "
            f"GET /authenticated/resource-exports/{args.export_id}/download, or export less "
            "(filters: key, speaker, tags, since, until)"
        )
    text = record.file.read_text(encoding="utf-8")
    return ExportContent(id=record.id, format=fmt, bytes=size, content=text)


TOOLS: list[Callable[..., Any]] = [
    create_resource_export,
    get_resource_export,
    read_resource_export,
]
