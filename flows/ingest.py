"""On-demand ingest: one retried task over `memory.ops.transfer`, plus a table artifact of
counts.

Retrying is safe: ingest is idempotent (stable ids), so a retried or re-run ingest stores
only what is missing.
"""

from __future__ import annotations

from typing import Any

from prefect import flow

from flows.paths import note_relative
from flows.tasks import bank_task, publish_table
from memory.context import Context
from memory.ops import transfer
from memory.ops.transfer import DEFAULT_BATCH, IngestReport, OnConflict


@bank_task(name="ingest_files", run_name="ingest {request.bank}", tags=["membank", "ingest"])
def ingest_files(ctx: Context, request: transfer.IngestRequest) -> IngestReport:
    """Ingest files and folders into a bank; returns the per-file counts."""
    return transfer.ingest_files(ctx, request)


def report_rows(report: IngestReport) -> list[dict[str, Any]]:
    """Return the counts of an ingest as table rows: one per file, then the total."""
    rows: list[dict[str, Any]] = [
        {
            "file": str(f.path),
            "rows": f.rows,
            "stored": f.stored,
            "already present": f.duplicates,
            "rejected": f.rejected,
            "rejects file": str(f.rejects_path or ""),
        }
        for f in report.files
    ]
    t = report.totals()
    rows.append(
        {
            "file": f"total ({t['files']} file{'' if t['files'] == 1 else 's'})",
            "rows": t["rows"],
            "stored": t["stored"],
            "already present": t["duplicates"],
            "rejected": t["rejected"],
            "rejects file": "",
        }
    )
    return rows


def report_notes(report: IngestReport) -> list[str]:
    """Return what the table does not show: replaced entries and inline compaction."""
    notes = []
    updated = report.totals()["updated"]
    if updated:
        notes.append(f"Updated: {updated} stored entries replaced by rows with their id.")
    tally = report.compaction
    if tally.partitions or tally.failed:
        notes.append(
            f"Inline compaction: {tally.partitions} partitions compacted, "
            f"{tally.summarized} entries summarized, {tally.dropped} dropped without a summary "
            f"(no compaction prompt), {tally.failed} failed (kept, retried later)."
        )
    return notes


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
    request = transfer.IngestRequest(
        bank=bank,
        paths=tuple(paths),
        rejects=rejects,
        batch_size=batch_size,
        on_conflict=on_conflict,
    )
    report = ingest_files(data, account, request)
    publish_table(
        "membank-ingest",
        report_rows(report),
        f"Ingest into `{report.bank}`: {report.stored} stored, {report.rejected} rejected",
        report_notes(report),
    )
    return report
