"""Ingest JSONL, CSV and Parquet files into a bank: streamed, validated per row, idempotent.

Each row is checked against the bank's type; a bad row goes to a rejects file (JSON lines
with the source, line/row number, a code and the reason) and never stops the run. Good
rows are embedded and written in batches, one commit per batch. Every entry gets a stable
id (the row's `id`, else a content hash), and ids already in the bank (or already folded
into a compaction summary) are skipped: re-ingesting a file, or re-running an ingest that
was killed midway, adds nothing twice. One id given to two different rows rejects the
second, and so does a `created_at` more than a day in the future.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from memory import banks, entries
from memory.compaction import CompactionResult
from memory.context import Context
from memory.errors import InvalidInput
from memory.ingest_files import (
    RejectsWriter,
    RowError,
    SourceRow,
    check_rejects_path,
    discover,
    read_rows,
)
from memory.models import Bank, EntryIn
from memory.store import filters

DEFAULT_BATCH = 512
"""Rows embedded and written per commit."""
COLUMNS = tuple(EntryIn.model_fields)
"""Columns an input row may have; any other column rejects the row."""
_JSON_TEXT = {"metadata": dict, "attachments": list}
FUTURE_SKEW = timedelta(days=1)
"""How far after the clock's now a row's `created_at` may be (clock skew); later is rejected."""

Progress = Callable[[int], None]


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
            "rejected": self.rejected,
        }


def ingest(
    ctx: Context,
    bank: Bank,
    paths: Sequence[str | Path],
    *,
    rejects: str | Path | None = None,
    batch_size: int = DEFAULT_BATCH,
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest files and folders into `bank`; returns per-file counts.

    Args:
        ctx: the context (store, embedder, clock).
        bank: the target bank; rows are validated against its type.
        paths: files (.jsonl, .ndjson, .csv, .parquet) and folders (searched recursively).
        rejects: one rejects file for every input; default `<input>.rejects.jsonl` per file.
            Rejects files from an earlier run are replaced; none is left when nothing is
            rejected. An existing file is replaced only if it is a rejects file (see
            `check_rejects_path`).
        batch_size: rows embedded and written per commit.
        progress: called with the number of rows read since the previous call.

    Raises:
        InvalidInput: a path is missing or unsupported, `batch_size` < 1, or the rejects
            path is unusable (an input, a file that is not a rejects file, not creatable);
            nothing is stored then.
        StorageError: a rejects file could not be written midway.
    """
    if batch_size < 1:
        raise InvalidInput(f"batch size must be at least 1, got {batch_size}")
    files = discover(paths)
    target = Path(rejects) if rejects else None
    if target is not None:
        check_rejects_path(target, paths, files)
    reports = [FileReport(path=str(f.path), format=f.format) for f in files]
    writer = _BatchWriter(ctx, bank, reports, batch_size)
    ids = _IdLedger()
    now = ctx.clock.now()
    with RejectsWriter(target) as sink:
        sink.start(files)
        read = 0
        for index, item in enumerate(files):
            for row in read_rows(item):
                reports[index].rows += 1
                read += 1
                try:
                    entry = to_entry(bank, row, now=now)
                    ids.check(row, entry)
                except RowError as exc:
                    reports[index].rejected += 1
                    reports[index].rejects_path = str(sink.write(item, row, exc))
                    continue
                if writer.add(index, entry) and progress:
                    progress(read)
                    read = 0
        writer.flush()
        if progress and read:
            progress(read)
    return IngestReport(
        bank_id=bank.id, bank=bank.name, files=reports, compaction=writer.compaction
    )


def to_entry(bank: Bank, row: SourceRow, *, now: datetime) -> EntryIn:
    """Return the entry a row describes, with its stable id; RowError says why not.

    `now` is the clock's time: a `created_at` more than `FUTURE_SKEW` after it is refused.
    """
    if row.error is not None:
        raise row.error
    record = dict(row.record or {})
    unknown = [name for name in record if name not in COLUMNS]
    if unknown:
        raise RowError(
            "unknown_column",
            f"unknown column {', '.join(map(repr, unknown))}: columns are {', '.join(COLUMNS)}",
        )
    for name in ("id", "key"):
        if isinstance(record.get(name), int) and not isinstance(record[name], bool):
            record[name] = str(record[name])
    _decode_json_text(record)
    if row.format == "csv" and isinstance(record.get("tags"), str):
        record["tags"] = _csv_tags(record["tags"])
    try:
        item = EntryIn.model_validate(record)
    except ValidationError as exc:
        raise _pydantic_error(exc) from None
    _check_for_bank(bank, item)
    _check_created_at(item, now)
    return item.model_copy(update={"id": item.id or stable_id(item, row.ordinal)})


def _decode_json_text(record: dict[str, Any]) -> None:
    for name, kind in _JSON_TEXT.items():
        value = record.get(name)
        if isinstance(value, str):
            try:
                record[name] = json.loads(value)
            except json.JSONDecodeError:
                raise RowError("wrong_type", f"{name}: not valid JSON text") from None
            if not isinstance(record[name], kind):
                raise RowError("wrong_type", f"{name}: must be a JSON {kind.__name__}")


def _csv_tags(text: str) -> Any:
    if text.lstrip().startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise RowError("wrong_type", "tags: not a valid JSON array") from None
    return [tag.strip() for tag in text.split(",") if tag.strip()]


def _pydantic_error(exc: ValidationError) -> RowError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "row"
    if first["type"] == "missing":
        return RowError(
            "missing_field",
            f"{where}: required, but this row has no value (column missing or cell empty)",
        )
    return RowError("wrong_type", f"{where}: {first['msg']}")


def _check_for_bank(bank: Bank, item: EntryIn) -> None:
    texts = [item.key, item.content, item.speaker or "", item.role or "", *item.tags]
    if any(not _encodable(t) for t in texts):
        raise RowError("bad_encoding", "text is not valid UTF-8 (lone surrogate)")
    if not item.content.strip():
        raise RowError("empty_content", "content is empty")
    if bank.type == "conversation" and not (item.speaker or "").strip():
        raise RowError("missing_speaker", "conversation banks need a speaker on every row")
    if bank.type == "general" and item.speaker is not None:
        raise RowError("unexpected_speaker", "general banks have no speaker: drop the column")
    if item.id is not None and not item.id.strip():
        raise RowError("invalid", "id is blank")
    try:
        entries.validate(bank, item)
    except InvalidInput as exc:
        raise RowError("invalid", str(exc)) from None


def _check_created_at(item: EntryIn, now: datetime) -> None:
    if item.created_at is None:
        return
    try:
        when = _utc(item.created_at)
    except OverflowError:
        raise RowError(
            "invalid", f"created_at {item.created_at.isoformat()} is out of range in UTC"
        ) from None
    if when > now + FUTURE_SKEW:
        raise RowError(
            "invalid",
            f"created_at {when.isoformat()} is in the future: at most one day after now "
            f"({now.isoformat(timespec='seconds')}) is accepted; fix the date",
        )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def stable_id(item: EntryIn, ordinal: int) -> str:
    """Return the content-hash id of a row without an `id`.

    The hash covers key, speaker, content and created_at; rows without created_at also
    hash their line/row number, so repeated short turns ("ok") stay distinct while a
    re-ingest of the same file maps every row to the same id.
    """
    when = f"#{ordinal}" if item.created_at is None else _utc(item.created_at).isoformat()
    material = json.dumps([item.key, item.speaker, item.content, when], ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class _IdLedger:
    """Remembers which row gave each explicit id in a run, to catch one id on two rows."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[bytes, str]] = {}

    def check(self, row: SourceRow, item: EntryIn) -> None:
        """Raise RowError when the row's own `id` was used earlier in the run for another row.

        The same row twice (every column equal) passes: it is skipped as already present.
        """
        if row.record is None or row.record.get("id") is None or item.id is None:
            return
        digest = hashlib.blake2b(
            item.model_dump_json(exclude={"id"}).encode("utf-8"), digest_size=8
        ).digest()
        where = f"{row.source} line {row.line}" if row.line else f"{row.source} row {row.row}"
        earlier = self._seen.setdefault(item.id, (digest, where))
        if earlier[0] != digest:
            raise RowError(
                "duplicate_id",
                f"id {item.id!r} was already used for a different row ({earlier[1]}); "
                "give each row its own id",
            )


class _BatchWriter:
    """Collects valid entries and writes them a batch at a time, skipping known ids."""

    def __init__(self, ctx: Context, bank: Bank, reports: list[FileReport], size: int) -> None:
        self.ctx = ctx
        self.bank = bank
        self.reports = reports
        self.size = size
        self.pending: list[tuple[int, EntryIn]] = []
        self.dims = banks.mode_of(bank).dims
        self.compaction = CompactionTally()

    def add(self, file_index: int, item: EntryIn) -> bool:
        """Queue an entry; returns True when this flushed a batch."""
        self.pending.append((file_index, item))
        if len(self.pending) >= self.size:
            self.flush()
            return True
        return False

    def flush(self) -> None:
        """Write the queued entries whose ids are new, in one commit."""
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        known = existing_ids(self.ctx, self.bank, [item.id or "" for _, item in batch])
        fresh: list[EntryIn] = []
        for file_index, item in batch:
            report = self.reports[file_index]
            if item.id in known:
                report.duplicates += 1
                continue
            known.add(item.id or "")
            report.stored += 1
            fresh.append(item)
        written = entries.write(self.ctx, self.bank, fresh, run_hooks=False)
        touched = {entry.key for entry in written}
        if self.ctx.after_write is not None:
            self.compaction.add(self.ctx.after_write(self.ctx, self.bank, touched))


def existing_ids(ctx: Context, bank: Bank, ids: Sequence[str]) -> set[str]:
    """Return which of `ids` are stored in the bank or were folded into a compaction summary."""
    if not ids:
        return set()
    wanted = sorted(set(ids))
    stored = filters.one_of("entry_id", wanted)
    summarized = f"kind = 'summary' AND array_has_any(summary_of, {filters.list_literal(wanted)})"
    where = filters.conjoin("chunk_index = 0", f"({stored}) OR ({summarized})")
    table = ctx.store.scan(
        bank.id, banks.mode_of(bank).dims, columns=["entry_id", "summary_of"], where=where
    )
    found = set(table.column("entry_id").to_pylist())
    for replaced in table.column("summary_of").to_pylist():
        found.update(replaced or ())
    return found & set(wanted)


def iter_report_lines(report: IngestReport) -> Iterator[str]:
    """Yield a readable summary of an ingest, one line per file then the totals."""
    for f in report.files:
        where = f" -> rejects in {f.rejects_path}" if f.rejects_path else ""
        yield (
            f"{f.path}: {f.rows} rows, {f.stored} stored, {f.duplicates} already present, "
            f"{f.rejected} rejected{where}"
        )
    t = report.totals()
    yield (
        f"total: {t['rows']} rows in {t['files']} file{'' if t['files'] == 1 else 's'}: "
        f"{t['stored']} stored, "
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
