"""Ingest JSONL, CSV and Parquet files into a bank: streamed, validated per row, idempotent.

Each row is checked against the bank's type; a bad row goes to a rejects file (JSON lines
with the source, line/row number, a code and the reason) and never stops the run. Good
rows are embedded and written in batches, one commit per batch. Every entry gets a stable
id (the row's `id`, else a content hash), and ids already in the bank (or already folded
into a compaction summary) are skipped: re-ingesting a file, or re-running an ingest that
was killed midway, adds nothing twice. One id given to two different rows rejects the
second, and so does a `created_at` more than a day in the future (`memory.validation` holds
every rule a row must pass). A row whose id is stored with another key or content is
rejected (`id_conflict`), or with `on_conflict="update"` replaces the stored entry, whose old
version is then deleted for good.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import ValidationError

from memory import entries, purge, validation
from memory.compaction.bank import compact_if_over
from memory.errors import IngestStopped, InvalidInput, StorageError
from memory.models import Bank, EntryIn
from memory.transfer.ingest.rejects import RejectsWriter, check_rejects_path
from memory.transfer.ingest.report import CompactionTally, FileReport, IngestReport
from memory.transfer.ingest.sources import RowError, SourceRow, count_rows, discover, read_rows
from memory.types.entry_filter import EntryFilter
from memory.types.problems import engine_text

if TYPE_CHECKING:
    from memory.context import Context

DEFAULT_BATCH = 512
"""Rows embedded and written per commit."""
COLUMNS = tuple(EntryIn.model_fields)
"""Columns an input row may have; any other column rejects the row."""
_JSON_TEXT = {"metadata": dict, "attachments": list}
OnConflict = Literal["reject", "update"]
"""What a row whose id is stored with another key or content does: rejected, or replaces it."""
ON_CONFLICT: tuple[OnConflict, ...] = ("reject", "update")


class Progress(Protocol):
    """A progress callback: rows read since the last call, and the total once known."""

    def __call__(self, count: int, of: int | None = None, /) -> None: ...


def ingest(
    ctx: Context,
    bank: Bank,
    paths: Sequence[str | Path],
    *,
    rejects: str | Path | None = None,
    batch_size: int = DEFAULT_BATCH,
    on_conflict: OnConflict = "reject",
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
        on_conflict: a row whose id is stored with another key or content is rejected
            (`reject`, code `id_conflict`) or replaces the stored entry (`update`: the old
            version is deleted for good). A row equal to the stored one is skipped either way.
        progress: called with the number of rows read since the previous call, first with
            0 and the files' total rows when they can be counted (`count_rows`).

    Raises:
        InvalidInput: a path is missing or unsupported, `batch_size` < 1, an unknown
            `on_conflict`, or the rejects path is unusable (an input, a file that is not a
            rejects file, not creatable); nothing is stored then.
        IngestStopped: a storage failure (a full disk, a rejects file that could not be
            written) or Ctrl-C stopped it midway; says how many rows were stored.
    """
    if batch_size < 1:
        raise InvalidInput(f"batch size must be at least 1, got {batch_size}")
    if on_conflict not in ON_CONFLICT:
        raise InvalidInput(f"on_conflict must be reject or update, got {on_conflict!r}")
    files = discover(paths)
    target = Path(rejects) if rejects else None
    if target is not None:
        check_rejects_path(target, paths, files)
    reports = [FileReport(path=str(f.path), format=f.format) for f in files]
    ids = _IdLedger()
    now = ctx.clock.now()
    with RejectsWriter(target) as sink:
        sink.start(files)

        def reject(index: int, row: SourceRow, error: RowError) -> None:
            reports[index].rejected += 1
            reports[index].rejects_path = str(sink.write(files[index], row, error))

        writer = _BatchWriter(ctx, bank, reports, batch_size, on_conflict, reject)
        if progress:
            progress(0, count_rows(files))
        try:
            read = 0
            for index, item in enumerate(files):
                for row in read_rows(item):
                    reports[index].rows += 1
                    read += 1
                    try:
                        entry = to_entry(bank, row, now=now)
                        ids.check(row, entry)
                    except RowError as exc:
                        reject(index, row, exc)
                        continue
                    if writer.add(_Pending(index, row, entry)) and progress:
                        progress(read)
                        read = 0
            writer.flush()
            if progress and read:
                progress(read)
        except (StorageError, OSError, KeyboardInterrupt) as exc:
            raise _stopped(exc, writer.committed) from exc
        finally:
            writer.prune_replaced()
    return IngestReport(
        bank_id=bank.id, bank=bank.name, files=reports, compaction=writer.compaction
    )


def _stopped(exc: BaseException, stored: int) -> IngestStopped:
    """Return the error an ingest stopped by `exc` raises: what stopped it, and how many rows
    it had stored (those stay; the same ingest run again skips them by id)."""
    interrupted = isinstance(exc, KeyboardInterrupt)
    why = "interrupted" if interrupted else engine_text(exc)
    rows = "1 row" if stored == 1 else f"{stored} rows"
    return IngestStopped(
        f"ingest stopped ({why}) after storing {rows}; they stay, and running the same "
        "ingest again skips them by id",
        stored=stored,
        interrupted=interrupted,
    )


def to_entry(bank: Bank, row: SourceRow, *, now: datetime) -> EntryIn:
    """Return the entry a row describes, with its stable id; RowError says why not.

    `now` is the clock's time: a `created_at` more than `validation.FUTURE_SKEW` after it is
    refused.
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
    try:
        validation.check_entry(bank, item, now=now)
    except validation.Invalid as exc:
        raise RowError(exc.code, str(exc)) from None
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
    problem = validation.first_problem(exc, "row")
    if problem.type == "missing":
        return RowError(
            "missing_field",
            f"{problem.field}: required, but this row has no value (column missing or cell empty)",
        )
    return RowError("wrong_type", str(problem))


def stable_id(item: EntryIn, ordinal: int) -> str:
    """Return the content-hash id of a row without an `id`.

    The hash covers key, speaker, content and created_at; rows without created_at also
    hash their line/row number, so repeated short turns ("ok") stay distinct while a
    re-ingest of the same file maps every row to the same id.
    """
    if item.created_at is None:
        when = f"#{ordinal}"
    else:
        when = validation.as_utc(item.created_at, "created_at").isoformat()
    material = json.dumps([item.key, item.speaker, item.content, when], ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


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
        earlier = self._seen.setdefault(item.id, (digest, _where(row)))
        if earlier[0] != digest:
            raise RowError(
                "duplicate_id",
                f"id {item.id!r} was already used for a different row ({earlier[1]}); "
                "give each row its own id",
            )


def _where(row: SourceRow) -> str:
    return f"{row.source} line {row.line}" if row.line else f"{row.source} row {row.row}"


@dataclass(frozen=True, slots=True)
class _Pending:
    """A valid row waiting for its batch: which file, the row, and its entry."""

    file_index: int
    row: SourceRow
    item: EntryIn


@dataclass(frozen=True, slots=True)
class Stored:
    """What a stored entry holds that decides whether a row with its id is the same entry."""

    key: str
    content: str
    kind: str
    rest: tuple[Any, ...] = ()
    """The other fields a row may change (`_REST`), as `_rest_of` gives them."""


_REST = ("speaker", "role", "memory_type", "tags", "metadata", "attachments", "created_at")
"""Fields besides key and content that `on_conflict="update"` brings up to date."""


def _rest_of(values: dict[str, Any]) -> tuple[Any, ...]:
    """Return the `_REST` fields of an entry, comparable between a row and a stored entry."""
    when = values.get("created_at")
    return (
        values.get("speaker"),
        values.get("role"),
        values.get("memory_type"),
        sorted(values.get("tags") or []),
        json.dumps(values.get("metadata") or {}, sort_keys=True),
        json.dumps(values.get("attachments") or [], sort_keys=True),
        None if when is None else validation.as_utc(when, "created_at"),
    )


def _unchanged(stored: Stored, item: EntryIn, on_conflict: OnConflict) -> bool:
    """Return True when a row adds nothing to the stored entry of its id (it is skipped).

    Key and content decide under `reject`; `update` also compares the other fields (a row
    without `created_at` keeps the stored time).
    """
    if (stored.key, stored.content) != (item.key, item.content):
        return False
    if on_conflict != "update" or not stored.rest:
        return True
    mine = list(_rest_of(item.model_dump()))
    if mine[-1] is None:
        mine[-1] = stored.rest[-1]
    return tuple(mine) == stored.rest


@dataclass
class _BatchWriter:
    """Collects valid entries and writes them a batch at a time, skipping known ids and
    rejecting or replacing stored entries whose id a row gives to other key or content."""

    ctx: Context
    bank: Bank
    reports: list[FileReport]
    size: int
    on_conflict: OnConflict
    reject: Callable[[int, SourceRow, RowError], None]
    """Files a row as rejected: its file's index, the row and why."""
    pending: list[_Pending] = field(default_factory=list)
    compaction: CompactionTally = field(default_factory=CompactionTally)
    replaced: bool = False
    """Whether a stored entry was deleted for a row's version (its prune is due)."""
    committed: int = 0
    """Entries stored (new or replacing) by the batches committed so far."""

    def add(self, pending: _Pending) -> bool:
        """Queue an entry; returns True when this flushed a batch."""
        self.pending.append(pending)
        if len(self.pending) >= self.size:
            self.flush()
            return True
        return False

    def flush(self) -> None:
        """Write the queued entries whose ids are new or replace a stored entry, in one commit
        (after one delete commit of the entries they replace)."""
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        known = stored_entries(self.ctx, self.bank, [p.item.id or "" for p in batch])
        fresh: list[EntryIn] = []
        placed: list[_Pending] = []
        replace: dict[str, Stored] = {}
        for pending in batch:
            item, report = pending.item, self.reports[pending.file_index]
            entry_id = item.id or ""
            if entry_id in known:
                stored = known[entry_id]
                if stored is None or _unchanged(stored, item, self.on_conflict):
                    report.duplicates += 1
                    continue
                if self.on_conflict == "reject":
                    self.reject(pending.file_index, pending.row, _conflict(entry_id, stored, item))
                    continue
                replace[entry_id] = stored
                report.updated += 1
            else:
                report.stored += 1
            known[entry_id] = Stored(item.key, item.content, "entry")
            fresh.append(item)
            placed.append(pending)
        self._delete(replace)
        written = entries.write(self.ctx, self.bank, fresh, unique=True)
        self.committed += len(written)
        self._count_skipped(placed, {entry.id for entry in written}, replace)
        touched = {entry.key for entry in written}
        self.compaction.add(compact_if_over(self.ctx, self.bank, touched))

    def _count_skipped(
        self, batch: list[_Pending], written: set[str], replace: dict[str, Stored]
    ) -> None:
        """Count as already present the rows another run stored between our check and our
        append (the store skipped their ids)."""
        for pending in batch:
            entry_id = pending.item.id or ""
            if entry_id in written:
                continue
            report = self.reports[pending.file_index]
            if entry_id in replace:
                report.updated -= 1
            else:
                report.stored -= 1
            report.duplicates += 1

    def _delete(self, replace: dict[str, Stored]) -> None:
        """Delete the stored versions the batch replaces, in one commit; `prune_replaced`
        removes them from disk once, after the last batch."""
        if not replace:
            return
        purge.delete_final(self.ctx, self.bank, EntryFilter.of_ids(list(replace)), prune_now=False)
        self.replaced = True
        if any(stored.kind == "summary" for stored in replace.values()):
            purge.record_summary_count(self.ctx, self.bank)

    def prune_replaced(self) -> None:
        """Prune the replaced versions out of the bank's files and old table versions."""
        if self.replaced:
            purge.prune(self.ctx, self.bank)
            self.replaced = False


def _conflict(entry_id: str, stored: Stored, item: EntryIn) -> RowError:
    show = validation.shown
    moved = "" if stored.key == item.key else f" (this row has key {show(item.key)})"
    content = "the same content" if stored.content == item.content else "different content"
    return RowError(
        "id_conflict",
        f"id {show(entry_id)} is already stored as another entry: the stored entry "
        f"{show(entry_id)} has key {show(stored.key)}{moved} and {content}; give this row "
        "its own id, or ingest with --on-conflict update to replace the stored entry",
    )


def stored_entries(ctx: Context, bank: Bank, ids: Sequence[str]) -> dict[str, Stored | None]:
    """Return which of `ids` the bank holds: each stored entry's key, content and kind, or
    None for an id folded into a compaction summary (its entry is gone, its facts are kept)."""
    if not ids:
        return {}
    wanted = tuple(sorted(set(ids)))
    flt = EntryFilter(any_of=(EntryFilter(ids=wanted), EntryFilter(summarizes_any=wanted)))
    held = ctx.store.entries(bank.id, flt)
    found: dict[str, Stored | None] = {}
    for entry in held:
        found.update(dict.fromkeys(entry.summary_of, None))
    for entry in held:
        rest = _rest_of({name: getattr(entry, name) for name in _REST})
        found[entry.id] = Stored(entry.key, entry.content, entry.kind, rest)
    return {entry_id: found[entry_id] for entry_id in wanted if entry_id in found}
