"""On-demand export: one retried task over `memory.export`, plus a markdown artifact.

Retrying is safe: an export writes a temporary file and renames it, so a failed attempt
leaves nothing behind.
"""

from __future__ import annotations

from datetime import datetime

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from flows.paths import note_relative
from flows.retry import transient
from memory import banks
from memory.context import open_context
from memory.export import ExportFilters, ExportFormat, ExportResult, PartitionBy, export


@task(
    retries=2,
    retry_delay_seconds=10,
    tags=["membank", "export"],
    cache_policy=NO_CACHE,
    retry_condition_fn=transient,
    task_run_name="export {bank}",
)
def export_bank(
    bank: str,
    fmt: ExportFormat,
    out: str,
    flt: ExportFilters,
    with_vectors: bool = False,
    partition_by: PartitionBy | None = None,
    data: str | None = None,
    account: str | None = None,
) -> ExportResult:
    """Export a bank's matching entries to `out`; returns what was written."""
    ctx = open_context(data, account=account)
    return export(
        ctx,
        banks.get(ctx, bank),
        fmt,
        out,
        flt,
        with_vectors=with_vectors,
        partition_by=partition_by,
    )


def result_markdown(bank: str, result: ExportResult, flt: ExportFilters) -> str:
    """Return what an export wrote as a markdown table."""
    given = {k: v for k, v in flt.model_dump(mode="json").items() if v not in (None, [])}
    rows = [
        ("format", result.format),
        ("path", f"`{result.path}`"),
        ("entries", f"{result.entries}"),
        ("bytes", f"{result.bytes}"),
        ("files", f"{result.files}"),
        ("partitioned by", result.partition_by or ""),
        ("vectors", "yes" if result.with_vectors else "no"),
        ("filters", ", ".join(f"{k}={v}" for k, v in given.items()) or "none"),
    ]
    lines = [f"# Export of `{bank}`", "", "| | |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines)


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
    result = export_bank(
        bank,
        export_format,
        out,
        flt,
        with_vectors=with_vectors,
        partition_by=partition_by,
        data=data,
        account=account,
    )
    create_markdown_artifact(
        markdown=result_markdown(bank, result, flt),
        key="membank-export",
        description=f"export of {bank}: {result.entries} entries to {result.path}",
    )
    return result
