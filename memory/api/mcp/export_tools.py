"""Export tools: start an export (a job of the server's pool, like the REST endpoint), poll
it, and read a finished JSON export back."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from memory.api.mcp.inputs import ExportChunk, ExportRef, ExportSpec, StartExport
from memory.api.schemas import ResourceExport, export_out
from memory.api.state import ApiState
from memory.context import Context
from memory.errors import InvalidInput
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


class ExportBytes(BaseModel):
    """A byte range of an export's file, base64-encoded: call again at `next_offset` until it
    is null, then decode and join the pieces (a Parquet file or a JSON export of any size)."""

    id: str
    format: str
    bytes: int = Field(description="The whole file's size.")
    offset: int
    data: str = Field(description="The range's bytes, standard base64.")
    next_offset: int | None = Field(description="Where the next range starts; null at the end.")
    sha256: str | None = Field(
        None, description="The whole file's sha256 (hex), on the last range, to check the join."
    )


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
    """Return a finished JSON export's content (up to 1 MB; a larger one, or a Parquet export:
    read_resource_export_bytes)."""
    ready = exports.download(state.jobs, ctx.account, args.export_id, args.wait)
    if ready.format != "json" or ready.bytes > MAX_INLINE:
        raise InvalidInput(
            f"export {args.export_id} is {ready.format}, {ready.bytes} bytes: "
            f"read_resource_export returns JSON exports up to {MAX_INLINE} bytes; read this one "
            "with read_resource_export_bytes (base64 ranges, any format and size)"
        )
    found, text = exports.read_json(
        state.jobs, ctx.account, args.export_id, wait=args.wait, max_bytes=MAX_INLINE
    )
    return ExportContent(id=args.export_id, format=found.format, bytes=found.bytes, content=text)


def read_resource_export_bytes(ctx: Context, args: ExportChunk, state: ApiState) -> ExportBytes:
    """Return a byte range of a finished export's file (JSON or Parquet, any size), base64:
    read from offset 0 and follow next_offset until it is null, then decode and join."""
    found = exports.download(state.jobs, ctx.account, args.export_id, args.wait)
    with found.path.open("rb") as source:
        source.seek(args.offset)
        data = source.read(args.length)
    end = args.offset + len(data)
    last = end >= found.bytes
    digest = _sha256(found.path) if last else None
    return ExportBytes(
        id=args.export_id,
        format=found.format,
        bytes=found.bytes,
        offset=args.offset,
        data=base64.b64encode(data).decode("ascii"),
        next_offset=None if last else end,
        sha256=digest,
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


TOOLS: list[Callable[..., Any]] = [
    estimate_resource_export,
    create_resource_export,
    get_resource_export,
    read_resource_export,
    read_resource_export_bytes,
]
