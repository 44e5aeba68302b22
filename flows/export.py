"""On-demand export: one retried task over `memory.ops.transfer`, plus a table artifact.

Retrying is safe: an export writes a temporary file and renames it, so a failed attempt
leaves nothing behind.
"""

from __future__ import annotations

from datetime import datetime

from prefect import flow

from flows.paths import note_relative
from flows.tasks import bank_task, publish_table
from memory.context import Context
from memory.ops import transfer
from memory.ops.transfer import ExportFilters, ExportFormat, ExportResult, PartitionBy


@bank_task(name="export_bank", run_name="export {request.bank}", tags=["membank", "export"])
def export_bank(ctx: Context, request: transfer.ExportToFile) -> ExportResult:
    """Export a bank's matching entries to the request's file; returns what was written."""
    return transfer.export_file(ctx, request)


def result_rows(result: ExportResult, flt: ExportFilters) -> list[dict[str, str]]:
    """Return what an export wrote as the rows of a two-column table."""
    given = {k: v for k, v in flt.model_dump(mode="json").items() if v not in (None, [])}
    rows = [
        ("format", result.format),
        ("path", str(result.path)),
        ("entries", f"{result.entries}"),
        ("bytes", f"{result.bytes}"),
        ("files", f"{result.files}"),
        ("partitioned by", result.partition_by or ""),
        ("vectors", "yes" if result.with_vectors else "no"),
        ("filters", ", ".join(f"{k}={v}" for k, v in given.items()) or "none"),
    ]
    return [{"item": name, "value": value} for name, value in rows]


@flow(name="membank-export", log_prints=True)
def export_flow(
    bank: str,
    export_format: ExportFormat,
    out: str,
    key: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    speaker: str | None = None,
    tags: list[str] | None = None,
    with_vectors: bool = False,
    partition_by: PartitionBy | None = None,
    data: str | None = None,
    account: str | None = None,
) -> ExportResult:
    """Export a bank to JSON or Parquet and publish what was written."""
    note_relative([out])
    flt = ExportFilters(key=key, since=since, until=until, speaker=speaker, tags=tags or [])
    request = transfer.ExportToFile(
        bank=bank,
        format=export_format,
        out=out,
        filters=flt,
        with_vectors=with_vectors,
        partition_by=partition_by,
    )
    result = export_bank(data, account, request)
    publish_table(
        "membank-export",
        result_rows(result, flt),
        f"Export of `{bank}`: {result.entries} entries to `{result.path}`",
    )
    return result
