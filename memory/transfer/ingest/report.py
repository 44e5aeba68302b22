"""What an ingest did: per-file and total counts, and what inline compaction did meanwhile."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from memory.compaction.apply import CompactionResult


class FileReport(BaseModel):
    """Counts for one input file."""

    path: str
    format: str
    rows: int = 0
    """Rows read (blank lines are not rows)."""
    stored: int = 0
    """New entries written."""
    duplicates: int = 0
    """Rows whose entry was already in the bank (or earlier in this run): skipped."""
    updated: int = 0
    """Rows that replaced the stored entry of their id (other key or content; only with
    `on_conflict="update"`); the old version is deleted for good."""
    rejected: int = 0
    """Rows written to the rejects file."""
    rejects_path: str | None = None
    """Where this file's rejected rows are (None when none were rejected)."""


class CompactionTally(BaseModel):
    """What inline compaction did to the bank while an ingest wrote to it."""

    partitions: int = 0
    """Partitions that went over a threshold and were compacted."""
    summarized: int = 0
    """Entries folded into compaction summaries (their information is kept)."""
    dropped: int = 0
    """Entries deleted without a summary (the bank has no compaction prompt)."""
    failed: int = 0
    """Partitions left over their thresholds because the summary failed (retried later)."""

    def add(self, results: Sequence[CompactionResult]) -> None:
        """Count the results of one batch's inline compaction."""
        for result in results:
            if result.status == "compacted":
                self.partitions += 1
                self.summarized += result.covered
            elif result.status == "dropped":
                self.partitions += 1
                self.dropped += result.covered
            elif result.status == "failed":
                self.failed += 1


class IngestReport(BaseModel):
    """The outcome of an ingest: per-file and total counts, and the inline compaction."""

    bank_id: str
    bank: str
    files: list[FileReport]
    compaction: CompactionTally = Field(default_factory=CompactionTally)

    @property
    def rows(self) -> int:
        """Return the rows read from every file."""
        return sum(f.rows for f in self.files)

    @property
    def stored(self) -> int:
        """Return the new entries written."""
        return sum(f.stored for f in self.files)

    @property
    def duplicates(self) -> int:
        """Return the rows skipped because their entry already exists."""
        return sum(f.duplicates for f in self.files)

    @property
    def updated(self) -> int:
        """Return the stored entries replaced by a row with the same id."""
        return sum(f.updated for f in self.files)

    @property
    def rejected(self) -> int:
        """Return the rows quarantined in rejects files."""
        return sum(f.rejected for f in self.files)

    def totals(self) -> dict[str, int]:
        """Return the total counts by name."""
        return {
            "files": len(self.files),
            "rows": self.rows,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "updated": self.updated,
            "rejected": self.rejected,
        }


def iter_report_lines(report: IngestReport) -> Iterator[str]:
    """Yield a readable summary of an ingest, one line per file then the totals."""
    for f in report.files:
        where = f" -> rejects in {f.rejects_path}" if f.rejects_path else ""
        updated = f"{f.updated} updated, " if f.updated else ""
        yield (
            f"{f.path}: {f.rows} rows, {f.stored} stored, {updated}{f.duplicates} already "
            f"present, {f.rejected} rejected{where}"
        )
    t = report.totals()
    updated = f"{t['updated']} updated, " if t["updated"] else ""
    yield (
        f"total: {t['rows']} rows in {t['files']} file{'' if t['files'] == 1 else 's'}: "
        f"{t['stored']} stored, {updated}"
        f"{t['duplicates']} already present, {t['rejected']} rejected"
    )
    tally = report.compaction
    if tally.partitions or tally.failed:
        dropped = f", {tally.dropped} dropped (no compaction prompt)" if tally.dropped else ""
        failed = f", {tally.failed} failed (kept, retried later)" if tally.failed else ""
        yield (
            f"inline compaction: {tally.partitions} partitions compacted: "
            f"{tally.summarized} entries summarized{dropped}{failed}"
        )
