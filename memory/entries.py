"""Write, load and forget entries: validation by bank type, chunking, embedding, storage."""

from __future__ import annotations

import gc
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from memory import banks, purge
from memory.chunking import Chunks, chunk_many
from memory.config import Mode
from memory.context import Context
from memory.errors import InvalidInput, NotFound
from memory.models import MEMORY_TYPES, SUMMARY_SPEAKER, Bank, Entry, EntryIn, EntryKind
from memory.store import filters
from memory.store.schema import ENTRY_COLUMNS, index_text
from memory.text import check_one_line

MAX_CONTENT_BYTES = 256_000
"""Largest entry accepted (UTF-8 bytes); split bigger documents before writing."""
MAX_KEY_LENGTH = 512
MAX_TAG_LENGTH = 64
MAX_SPEAKER_LENGTH = 200
"""Longest speaker or role: they are labels, embedded and indexed with every chunk."""
EMBED_BATCH = 256
"""Chunk texts given to the embedder at once (it batches further by length)."""
_JSON = json.JSONEncoder(ensure_ascii=False)
"""What `json.dumps(value, ensure_ascii=False)` uses, made once instead of per call."""

WriteHook = Callable[[Context, Bank, set[str]], object]
_after_write: list[WriteHook] = []


def on_write(hook: WriteHook) -> WriteHook:
    """Register a hook run after every write with the touched keys (inline compaction)."""
    if hook not in _after_write:
        _after_write.append(hook)
    return hook


def _check_text(label: str, value: str) -> int:
    """Return the UTF-8 size of `value`; InvalidInput when it is not text we can store."""
    if value.isascii():
        size = len(value)
    else:
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise InvalidInput(
                f"{label} is not valid UTF-8 text: re-encode the input as UTF-8"
            ) from exc
    if "\x00" in value:
        raise InvalidInput(f"{label} contains a NUL character: remove it")
    return size


def check_label(label: str, value: str, limit: int) -> None:
    """Check a one-line label: UTF-8, not blank, at most `limit` characters, no control
    characters (a newline or tab in a key, speaker, role or tag breaks every listing).

    Reads check their filters the same way: a label no write accepts matches nothing.
    """
    _check_text(label, value)
    if not value.strip() or len(value) > limit:
        shown = repr(value) if len(value) <= 80 else f"{len(value)} characters: {value[:60]!r}..."
        raise InvalidInput(f"{label} must be 1-{limit} characters, not blank, got {shown}")
    check_one_line(label, value)


def _check_json(label: str, value: dict[str, Any] | list[dict[str, Any]]) -> str:
    """Return `value` as the JSON text stored for it; InvalidInput when it is not plain JSON."""
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    try:
        text = _JSON.encode(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{label} must be plain JSON data: {exc}") from exc
    _check_text(label, text)
    return text


def validate(bank: Bank, item: EntryIn, kind: EntryKind = "entry") -> EntryIn:
    """Return `item` checked against the bank's type as an entry of `kind` would be written
    (only summaries may carry the summary speaker); InvalidInput says what is wrong."""
    _validated(bank, item, kind)
    return item


def _validated(bank: Bank, item: EntryIn, kind: EntryKind = "entry") -> tuple[str, str]:
    """Check `item` as `validate` does; returns its metadata and attachments as JSON text."""
    size = _check_text("content", item.content)
    check_label("key", item.key, MAX_KEY_LENGTH)
    if not item.content.strip():
        raise InvalidInput("content is empty: write some text")
    if size > MAX_CONTENT_BYTES:
        raise InvalidInput(
            f"content is {size} bytes, over the {MAX_CONTENT_BYTES}-byte limit: split it"
        )
    if bank.type == "conversation":
        if item.speaker is None or not item.speaker.strip():
            raise InvalidInput(
                f"bank {bank.name!r} is a conversation bank: every entry needs a speaker "
                "(--speaker NAME)"
            )
        check_label("speaker", item.speaker, MAX_SPEAKER_LENGTH)
        if kind == "entry" and item.speaker == SUMMARY_SPEAKER:
            raise InvalidInput(
                f"speaker {SUMMARY_SPEAKER!r} is reserved for compaction summaries: "
                "give the entry another speaker"
            )
        if item.memory_type is not None:
            raise InvalidInput("memory types belong to general banks; drop --memory-type")
    else:
        if item.speaker is not None:
            raise InvalidInput(
                f"bank {bank.name!r} is a general bank: entries have no speaker "
                "(drop --speaker, or use a conversation bank)"
            )
        if item.role is not None:
            raise InvalidInput("roles belong to conversation banks; drop --role")
        if item.memory_type is not None and item.memory_type not in MEMORY_TYPES:
            raise InvalidInput(
                f"unknown memory type {item.memory_type!r}: use one of {', '.join(MEMORY_TYPES)}"
            )
    if item.role is not None:
        if not item.role.strip():
            raise InvalidInput("role is blank: give a role (system, user, assistant, ...) or none")
        check_label("role", item.role, MAX_SPEAKER_LENGTH)
    metadata = _check_json("metadata", item.metadata)
    attachments = _check_json("attachments", item.attachments)
    for tag in item.tags:
        check_label("tag", tag, MAX_TAG_LENGTH)
    return metadata, attachments


def write(
    ctx: Context,
    bank: Bank,
    items: Sequence[EntryIn],
    *,
    kind: EntryKind = "entry",
    summary_of: Sequence[Sequence[str]] | None = None,
    run_hooks: bool = True,
) -> list[Entry]:
    """Validate, chunk, embed and store entries in one commit; returns the stored entries.

    Nothing is written unless every item is valid. After the write, hooks (inline
    compaction) run for the touched keys.
    """
    if not items:
        return []
    with _gc_paused():
        stored_json = [_validated(bank, item, kind) for item in items]
        mode = banks.mode_of(bank)
        written, columns = _records(ctx, bank, mode, items, stored_json, kind, summary_of)
        embed_texts = [
            index_text(speaker, text)
            for speaker, text in zip(columns["speaker"], columns["text"], strict=True)
        ]
    vectors = _embed(ctx, mode, embed_texts)
    table = pa.table(columns).append_column(
        "vector", pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), mode.dims)
    )
    ctx.store.add_rows(bank.id, mode.dims, table)
    if run_hooks:
        for hook in _after_write:
            hook(ctx, bank, {e.key for e in written})
    return written


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a batch's records are built.

    A batch allocates about ten containers per entry, all alive until it is stored, so the
    collector keeps scanning them and now and then the whole heap: 0.3-0.5 s per 20,000
    entries in bench/write.py, as much as building them. Reference counting still frees
    everything meanwhile; the collector resumes after (unless it was off already).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _records(
    ctx: Context,
    bank: Bank,
    mode: Mode,
    items: Sequence[EntryIn],
    stored_json: list[tuple[str, str]],
    kind: EntryKind,
    summary_of: Sequence[Sequence[str]] | None,
) -> tuple[list[Entry], dict[str, list[Any]]]:
    """Return validated items as entries and the column lists of their chunk rows.

    `stored_json` holds each item's metadata and attachments as `_validated` returned them.
    """
    now = _utc(ctx.clock.now())
    split = chunk_many(
        [item.content for item in items], size=mode.chunk_size, overlap=mode.chunk_overlap
    )
    written = [
        _entry(
            id=item.id or new_id,
            bank_id=bank.id,
            key=item.key,
            content=item.content,
            speaker=item.speaker,
            role=item.role,
            memory_type=item.memory_type,
            tags=list(item.tags),
            metadata=dict(item.metadata),
            attachments=list(item.attachments),
            kind=kind,
            summary_of=list(summary_of[position]) if summary_of else [],
            created_at=now if item.created_at is None else _utc(item.created_at),
            token_count=chunks.token_count,
        )
        for position, (item, chunks, new_id) in enumerate(
            zip(items, split, _new_ids(len(items)), strict=True)
        )
    ]
    return written, _columns(written, split, stored_json, time.time_ns())


_ENTRY_FIELDS = frozenset(Entry.model_fields)


def _entry(**values: Any) -> Entry:
    """Return an Entry of trusted values, every field given: `Entry.model_construct` without
    its per-field alias and default handling (a quarter of its cost)."""
    entry = Entry.__new__(Entry)
    object.__setattr__(entry, "__dict__", values)
    object.__setattr__(entry, "__pydantic_fields_set__", set(_ENTRY_FIELDS))
    object.__setattr__(entry, "__pydantic_extra__", None)
    object.__setattr__(entry, "__pydantic_private__", None)
    return entry


def _new_ids(count: int) -> list[str]:
    """Return `count` random version-4 UUIDs as 32 hex digits, like `uuid.uuid4().hex`."""
    digits = os.urandom(16 * count).hex()
    return [
        f"{digits[i : i + 12]}4{digits[i + 13 : i + 16]}"
        f"{_VARIANT[digits[i + 16]]}{digits[i + 17 : i + 32]}"
        for i in range(0, 32 * count, 32)
    ]


_VARIANT = {f"{n:x}": "89ab"[n & 3] for n in range(16)}
"""The RFC 4122 variant nibble (10xx) keeping a random hex digit's two low bits."""


def _columns(
    written: list[Entry], split: list[Chunks], stored_json: list[tuple[str, str]], seq: int
) -> dict[str, list[Any]]:
    """Return the column lists of the chunk rows of `written` (content on chunk 0 only)."""
    chunk_index = [index for chunks in split for index in range(len(chunks.texts))]
    if len(chunk_index) == len(written):  # one chunk each, the common case
        owners, rows = written, list(range(len(written)))
    else:
        rows = [position for position, chunks in enumerate(split) for _ in chunks.texts]
        owners = [written[position] for position in rows]
    counts = [len(split[position].texts) for position in rows]
    return {
        "entry_id": [e.id for e in owners],
        "key": [e.key for e in owners],
        "speaker": [e.speaker for e in owners],
        "role": [e.role for e in owners],
        "memory_type": [e.memory_type for e in owners],
        "kind": [e.kind for e in owners],
        "chunk_index": chunk_index,
        "chunk_count": counts,
        "text": [text for chunks in split for text in chunks.texts],
        "content": [
            e.content if i == 0 else None for e, i in zip(owners, chunk_index, strict=True)
        ],
        "tags": [e.tags for e in owners],
        "metadata": [stored_json[position][0] for position in rows],
        "attachments": [stored_json[position][1] for position in rows],
        "summary_of": [e.summary_of for e in owners],
        "created_at": [e.created_at for e in owners],
        "seq": [seq + position for position in rows],
        "token_count": [e.token_count for e in owners],
    }


def _embed(ctx: Context, mode: Mode, texts: list[str]) -> Any:
    """Return the vectors of `texts`, embedded `EMBED_BATCH` at a time into one array, so a
    write's memory stays bounded by the batch whatever its size (the vectors alone are
    1.5 kB per chunk)."""
    embedder = ctx.embedder(mode)
    if embedder.dims != mode.dims:
        raise InvalidInput(
            f"embedder {embedder.name} has {embedder.dims} dims, mode needs {mode.dims}"
        )
    if len(texts) <= EMBED_BATCH:
        return embedder.embed(texts)
    out = np.empty((len(texts), mode.dims), dtype=np.float32)
    for start in range(0, len(texts), EMBED_BATCH):
        out[start : start + EMBED_BATCH] = embedder.embed(texts[start : start + EMBED_BATCH])
    return out


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def entry_from_row(bank_id: str, row: dict[str, Any]) -> Entry:
    """Return the Entry of a chunk-0 row."""
    return Entry(
        id=row["entry_id"],
        bank_id=bank_id,
        key=row["key"],
        content=row["content"] if row.get("content") is not None else row["text"],
        speaker=row.get("speaker"),
        role=row.get("role"),
        memory_type=row.get("memory_type"),
        tags=list(row.get("tags") or []),
        metadata=json.loads(row.get("metadata") or "{}"),
        attachments=json.loads(row.get("attachments") or "[]"),
        kind=row.get("kind") or "entry",
        summary_of=list(row.get("summary_of") or []),
        created_at=_utc(row["created_at"]),
        token_count=int(row["token_count"]),
    )


def read(ctx: Context, bank: Bank, where: str | None = None) -> list[Entry]:
    """Return the entries matching `where` (entry-level), oldest first."""
    predicate = filters.conjoin("chunk_index = 0", where)
    dims = banks.vector_dims(ctx, bank)  # a read needs no embedder, only the vectors' width
    table = ctx.store.scan(bank.id, dims, columns=ENTRY_COLUMNS, where=predicate)
    rows = sorted(table.to_pylist(), key=lambda r: (r["created_at"], r["seq"]))
    return [entry_from_row(bank.id, row) for row in rows]


def load(ctx: Context, bank: Bank, key: str) -> list[Entry]:
    """Return the whole thread (every entry) of `key`, oldest first."""
    check_label("key", key, MAX_KEY_LENGTH)
    return read(ctx, bank, filters.equals("key", key))


def get_entry(ctx: Context, bank: Bank, entry_id: str) -> Entry:
    """Return one entry by id; NotFound if it does not exist in this bank."""
    _check_text("entry id", entry_id)
    found = read(ctx, bank, filters.equals("entry_id", entry_id))
    if not found:
        raise NotFound(f"no entry {entry_id!r} in bank {bank.name!r}")
    return found[0]


def forget(ctx: Context, bank: Bank, entry_id: str) -> Entry:
    """Delete an entry: its text, vectors and attachments, and the old versions holding them."""
    entry = get_entry(ctx, bank, entry_id)
    purge.delete_for_good(ctx, bank, filters.equals("entry_id", entry_id))
    if entry.kind == "summary":
        purge.record_summary_count(ctx, bank)
    return entry
