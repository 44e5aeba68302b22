"""Export tools: start an export (a job of the server's pool, like the REST endpoint), poll
it, and read a finished JSON export back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from memory.api.mcp.inputs import ExportRef, ExportSpec, StartExport
from memory.api.schemas import ResourceExport, export_out
from memory.api.state import ApiState
from memory.context import Context
from memory.ops import exports
from memory.transfer.export.records import ExportEstimate

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
    record = exports.create(ctx, state.jobs, state.exports_dir, args.request())
    return export_out(exports.get(state.jobs, ctx.account, record.id, args.wait))


def estimate_resource_export(ctx: Context, args: ExportSpec) -> ExportEstimate:
    """Return how many entries an export would hold and about how large its file would be."""
    return exports.estimate(ctx, args.request())


def get_resource_export(ctx: Context, args: ExportRef, state: ApiState) -> ResourceExport:
    """Return an export's status (queued, running, succeeded, failed) and, once done, its size."""
    return export_out(exports.get(state.jobs, ctx.account, args.export_id, args.wait))


def read_resource_export(ctx: Context, args: ExportRef, state: ApiState) -> ExportContent:
    """Return a finished JSON export's content (up to 1 MB; larger ones: download over REST)."""
    found, text = exports.read_json(
        state.jobs, ctx.account, args.export_id, wait=args.wait, max_bytes=MAX_INLINE
    )
    return ExportContent(id=args.export_id, format=found.format, bytes=found.bytes, content=text)


TOOLS: list[Callable[..., Any]] = [
    estimate_resource_export,
    create_resource_export,
    get_resource_export,
    read_resource_export,
]
