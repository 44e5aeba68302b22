"""Import a JSON export into a new bank, so banks move between installs (streamed).

The export keeps one entry per line; the importer reads it line by line, so memory stays
bounded. A file reformatted by another tool (one JSON document, any layout) is read whole.
Entries keep their ids, times, kinds and summary links; vectors are recomputed with the
bank's mode. If anything fails, the new bank is deleted again: an import is all or nothing.
Until the last entry is written the bank carries a marked name (`[importing ID] NAME`) and
only then takes its own, so a killed import never leaves a bank that looks complete and never
blocks a re-run; the marked leftover is listed for deletion.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from memory import banks, entries, validation
from memory.errors import Conflict, InvalidInput
from memory.models import Bank, BankCreate, EntryIn, EntryKind, Strict
from memory.transfer.export import JSON_FORMAT, JSON_SCHEMA_VERSION

if TYPE_CHECKING:
    from memory.context import Context

IMPORT_BATCH = 512
Progress = Callable[[int], None]


class ExportedEntry(Strict):
    """One entry as a JSON export holds it: every Entry field but bank_id."""

    id: str
    key: str
    kind: EntryKind = "entry"
    speaker: str | None = None
    role: str | None = None
    memory_type: str | None = None
    content: str
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    attachments: list[dict[str, Any]] = Field(default_factory=list)
    summary_of: list[str] = Field(default_factory=list)
    created_at: datetime
    token_count: int


@dataclass(frozen=True, slots=True)
class _Located:
    """An entry read from an export, with where it stands in the file (for error messages)."""

    record: ExportedEntry
    where: str
    """`FILE line N` (a streamed export) or `FILE entry N` (one JSON document)."""


class ImportReport(BaseModel):
    """The bank an import created and what went into it."""

    bank: Bank
    source_bank: str
    """Name of the bank the export was made from."""
    entries: int
    summaries: int


def import_json(
    ctx: Context,
    path: str | Path,
    *,
    name: str | None = None,
    batch_size: int = IMPORT_BATCH,
    progress: Progress | None = None,
) -> ImportReport:
    """Create a new bank from a JSON export and write its entries; returns what was imported.

    Args:
        ctx: the context of the target install.
        path: a file written by `membank export --format json`.
        name: the new bank's name (default: the exported bank's name).
        batch_size: entries embedded and written per commit.
        progress: called with the number of entries written since the previous call.

    Raises:
        InvalidInput: not a membank export, a newer export version, a damaged file, an
            invalid new name, or an entry the bank's type does not allow (the message names
            the file and the entry's line or position and id).
        Conflict: a bank with that name exists (pass another `name`).
    """
    with ExitStack() as stack:
        try:
            handle = stack.enter_context(Path(path).open(encoding="utf-8"))
        except OSError as exc:
            raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            reader = _ExportReader(handle, str(path))
            source = _source_bank(reader.header, reader.name)
            request = _create_request(source, name)
            resolved = banks.resolve_create(  # every create rule, on the name it will carry
                request,
                account=ctx.account,
                now=ctx.clock.now(),
                api_version=banks.CURRENT_API_VERSION,
            )
            request = request.model_copy(update={"name": resolved.name})
            _check_name_free(ctx, request.name)
            bank = banks.create(ctx, request.model_copy(update={"name": _pending_name(request)}))
            try:
                count, summaries = _write_all(ctx, bank, reader.entries(), batch_size, progress)
            except BaseException:
                banks.delete(ctx, bank.id)
                raise
        except UnicodeDecodeError:
            raise InvalidInput(f"{path} is not a JSON export: it is not UTF-8 text") from None
    bank = bank.model_copy(
        update={
            "name": request.name,
            "summary_count": summaries,
            "last_compaction_at": source.last_compaction_at,
        }
    )
    try:
        banks.claim_name(ctx, bank)
    except Conflict:
        banks.delete(ctx, bank.id)
        raise
    return ImportReport(bank=bank, source_bank=source.name, entries=count, summaries=summaries)


def _check_name_free(ctx: Context, name: str) -> None:
    if ctx.store.bank_rows(ctx.account, name=name):
        raise Conflict(f"a bank named {name!r} already exists: pick another name (--name NEW)")


def _pending_name(request: BankCreate) -> str:
    """Return the marked name a bank carries while its import runs."""
    return f"[importing {uuid.uuid4().hex[:8]}] {request.name}"[: validation.MAX_NAME_LENGTH]


def _source_bank(header: dict[str, Any], where: str) -> Bank:
    if header.get("format") != JSON_FORMAT:
        raise InvalidInput(f'{where}: not a membank JSON export (no "format": "membank.export")')
    version = header.get("version")
    if not isinstance(version, int) or version > JSON_SCHEMA_VERSION:
        raise InvalidInput(
            f"{where}: export version {version!r} is newer than this membank reads "
            f"({JSON_SCHEMA_VERSION}): upgrade membank"
        )
    try:
        return Bank.model_validate(header.get("bank"))
    except ValidationError as exc:
        problem = validation.first_problem(exc, "configuration")
        raise InvalidInput(f"{where}: the bank's {problem}") from None


def _create_request(source: Bank, name: str | None) -> BankCreate:
    return BankCreate(
        name=source.name if name is None else name,
        type=source.type,
        mode=source.mode,
        description=source.description,
        compaction_prompt=source.compaction_prompt,
        max_tokens=source.max_tokens,
        max_turns=source.max_turns,
        retention_days=source.retention_days,
    )


def _write_all(
    ctx: Context,
    bank: Bank,
    records: Iterator[_Located],
    batch_size: int,
    progress: Progress | None,
) -> tuple[int, int]:
    count = summaries = 0
    batch: list[ExportedEntry] = []
    seen: set[str] = set()
    now = ctx.clock.now()

    def flush() -> None:
        nonlocal count, summaries, batch
        _write_batch(ctx, bank, batch)
        count, summaries = count + len(batch), summaries + _summaries(batch)
        if progress:
            progress(len(batch))
        batch = []

    for located in records:
        record = located.record
        if record.id in seen:
            raise InvalidInput(
                f"{located.where}: the export holds entry id {record.id!r} twice: it is "
                "damaged (ids are unique)"
            )
        seen.add(record.id)
        _check_entry(bank, located, now)
        batch.append(record)
        if len(batch) >= batch_size:
            flush()
    if batch:
        flush()
    return count, summaries


def _check_entry(bank: Bank, located: _Located, now: datetime) -> None:
    """Check an entry against the new bank's rules (those of every write, a `created_at`
    more than a day after `now` included) before anything is written; InvalidInput names
    the file, the entry's place in it and its id (never the bank's temporary name)."""
    record = located.record
    try:
        entries.validate(bank, _entry_in(record), record.kind, now=now)
    except InvalidInput as exc:
        raise InvalidInput(f"{located.where} (id {record.id!r}): {exc}") from None


def _summaries(batch: list[ExportedEntry]) -> int:
    return sum(1 for e in batch if e.kind == "summary")


def _write_batch(ctx: Context, bank: Bank, batch: list[ExportedEntry]) -> None:
    """Write a batch in order, one write per run of the same kind; no inline compaction."""
    for kind, run in groupby(batch, key=lambda e: e.kind):
        items = list(run)
        entries.write(
            ctx,
            bank,
            [_entry_in(e) for e in items],
            kind=kind,
            summary_of=[e.summary_of for e in items],
        )


def _entry_in(record: ExportedEntry) -> EntryIn:
    return EntryIn(
        id=record.id,
        key=record.key,
        content=record.content,
        speaker=record.speaker,
        role=record.role,
        memory_type=record.memory_type,
        tags=record.tags,
        metadata=record.metadata,
        attachments=record.attachments,
        created_at=record.created_at,
    )


class _ExportReader:
    """Reads an export's header, then its entries one line at a time."""

    def __init__(self, handle: IO[str], name: str) -> None:
        self.handle = handle
        self.name = name
        self._all: list[Any] | None = None
        first, second = handle.readline(), handle.readline()
        try:
            self.header: dict[str, Any] = json.loads(first.rstrip().removesuffix(",") + "}")
            streamed = second.strip() == '"entries": ['
        except json.JSONDecodeError:
            streamed = False
        if not streamed:
            self._read_whole()

    def _read_whole(self) -> None:
        self.handle.seek(0)
        try:
            data = json.load(self.handle)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{self.name} is not a JSON export: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            raise InvalidInput(f"{self.name} is not a membank JSON export (no entries list)")
        self._all = data.pop("entries")
        self.header = data

    def entries(self) -> Iterator[_Located]:
        """Yield every entry, checking the count the export announces at its end."""
        if self._all is not None:
            for number, value in enumerate(self._all, start=1):
                yield self._entry(value, f"entry {number}")
            self._check_count(self.header.get("entry_count"), len(self._all))
            return
        count = 0
        for number, line in enumerate(self.handle, start=3):
            text = line.strip()
            if text.startswith("]"):
                rest = (text[1:] + self.handle.read()).lstrip().removeprefix(",")
                try:
                    trailer = json.loads("{" + rest)
                except json.JSONDecodeError:
                    raise InvalidInput(f"{self.name}: damaged end of file") from None
                self._check_count(trailer.get("entry_count"), count)
                return
            if text:
                try:
                    value = json.loads(text.removesuffix(","))
                except json.JSONDecodeError as exc:
                    raise InvalidInput(
                        f"{self.name} line {number}: {exc.msg} (column {exc.colno}): the file "
                        "is damaged"
                    ) from None
                count += 1
                yield self._entry(value, f"line {number}")
        raise InvalidInput(f"{self.name} is truncated: the entries list never ends")

    def _entry(self, value: Any, where: str) -> _Located:
        try:
            record = ExportedEntry.model_validate(value)
        except ValidationError as exc:
            problem = validation.first_problem(exc, "entry")
            raise InvalidInput(f"{self.name} {where}: {problem}") from None
        return _Located(record=record, where=f"{self.name} {where}")

    def _check_count(self, announced: Any, read: int) -> None:
        if announced != read:
            raise InvalidInput(
                f"{self.name} is damaged: it announces {announced} entries but holds {read}"
            )
