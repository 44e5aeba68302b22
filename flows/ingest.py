"""On-demand ingest: one retried task over `memory.ingest`, plus a markdown artifact of counts.

Retrying is safe: ingest is idempotent (stable ids), so a retried or re-run ingest stores
only what is missing.
"""

from __future__ import annotations

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from flows.paths import note_relative
from flows.retry import transient
from memory import banks
from memory.context import open_context
from memory.ingest import DEFAULT_BATCH, OnConflict, ingest
from memory.ingest.report import IngestReport


@task(
    retries=2,
    retry_delay_seconds=10,
    tags=["membank", "ingest"],
    cache_policy=NO_CACHE,
    retry_condition_fn=transient,
    task_run_name="ingest {bank}",
)
def ingest_files(
    bank: str,
    paths: list[str],
    rejects: str | None = None,
    data: str | None = None,
    account: str | None = None,
    batch_size: int = DEFAULT_BATCH,
    on_conflict: OnConflict = "reject",
) -> IngestReport:
    """Ingest files and folders into a bank; returns the per-file counts."""
    ctx = open_context(data, account=account)
    return ingest(
        ctx,
        banks.get(ctx, bank),
        paths,
        rejects=rejects,
        batch_size=batch_size,
        on_conflict=on_conflict,
    )


def report_markdown(report: IngestReport) -> str:
    """Return the counts of an ingest as a markdown table."""
    lines = [
        f"# Ingest into `{report.bank}`",
        "",
        "| file | rows | stored | already present | rejected | rejects file |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for f in report.files:
        rejects = f"`{f.rejects_path}`" if f.rejects_path else ""
        lines.append(
            f"| `{f.path}` | {f.rows} | {f.stored} | {f.duplicates} | {f.rejected} | {rejects} |"
        )
    t = report.totals()
    lines.append(
        f"| **total ({t['files']} file{'' if t['files'] == 1 else 's'})** | {t['rows']} "
        f"| {t['stored']} | {t['duplicates']} "
        f"| {t['rejected']} | |"
    )
    if t["updated"]:
        lines += ["", f"Updated: {t['updated']} stored entries replaced by rows with their id."]
    tally = report.compaction
    if tally.partitions or tally.failed:
        lines += [
            "",
            f"Inline compaction: {tally.partitions} partitions compacted, "
            f"{tally.summarized} entries summarized, {tally.dropped} dropped without a summary "
            f"(no compaction prompt), {tally.failed} failed (kept, retried later).",
        ]
    return "\n".join(lines)


@flow(name="membank-ingest", log_prints=True)
def ingest_flow(
    bank: str,
    paths: list[str],
    rejects: str | None = None,
    data: str | None = None,
    account: str | None = None,
    batch_size: int = DEFAULT_BATCH,
    on_conflict: OnConflict = "reject",
) -> IngestReport:
    """Ingest JSONL / CSV / Parquet files or folders into a bank and publish the counts.

    `on_conflict`: a row whose id is stored with another key or content is rejected
    (`reject`, code `id_conflict`) or replaces the stored entry (`update`, the old version
    deleted for good).
    """
    note_relative([*paths, rejects])
    report = ingest_files(
        bank,
        paths,
        rejects=rejects,
        data=data,
        account=account,
        batch_size=batch_size,
        on_conflict=on_conflict,
    )
    create_markdown_artifact(
        markdown=report_markdown(report),
        key="membank-ingest",
        description=f"ingest into {report.bank}: {report.stored} stored, "
        f"{report.rejected} rejected",
    )
    return report
