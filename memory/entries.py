"""Write, load and forget entries: validation by bank type, chunking, embedding, storage."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from memory.chunking import chunk_many
from memory.config import Mode, get_mode
from memory.context import Context
from memory.errors import InvalidInput, NotFound
from memory.models import MEMORY_TYPES, Bank, Entry, EntryIn, EntryKind
from memory.store import filters
from memory.store.schema import ENTRY_COLUMNS, index_text

MAX_CONTENT_BYTES = 256_000
"""Largest entry accepted (UTF-8 bytes); split bigger documents before writing."""
MAX_KEY_LENGTH = 512
MAX_TAG_LENGTH = 64
EMBED_BATCH = 256

WriteHook = Callable[[Context, Bank, set[str]], None]
_after_write: list[WriteHook] = []


def on_write(hook: WriteHook) -> WriteHook:
    """Register a hook run after every write with the touched keys (inline compaction)."""
    if hook not in _after_write:
        _after_write.append(hook)
    return hook


def _check_text(label: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"{label} is not valid UTF-8 text: re-encode the input as UTF-8"
        ) from exc
    if "\x00" in value:
        raise InvalidInput(f"{label} contains a NUL character: remove it")


def _check_json(label: str, value: object) -> None:
    if not value:
        return
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{label} must be plain JSON data: {exc}") from exc
    _check_text(label, text)


def validate(bank: Bank, item: EntryIn) -> EntryIn:
    """Return `item` checked against the bank's type; InvalidInput says what is wrong."""
    _check_text("content", item.content)
    _check_text("key", item.key)
    if not item.key.strip() or len(item.key) > MAX_KEY_LENGTH:
        raise InvalidInput(f"key must be 1-{MAX_KEY_LENGTH} characters, not blank")
    if not item.content.strip():
        raise InvalidInput("content is empty: write some text")
    size = len(item.content.encode("utf-8"))
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
        _check_text("speaker", item.speaker)
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
        _check_text("role", item.role)
        if not item.role.strip():
            raise InvalidInput("role is blank: give a role (system, user, assistant, ...) or none")
    _check_json("metadata", item.metadata)
    _check_json("attachments", item.attachments)
    for tag in item.tags:
        _check_text("tag", tag)
        if not tag.strip() or len(tag) > MAX_TAG_LENGTH:
            raise InvalidInput(f"tags must be 1-{MAX_TAG_LENGTH} characters, got {tag!r}")
    return item


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
    for item in items:
        validate(bank, item)
    mode = get_mode(bank.mode)
    now = ctx.clock.now()
    base_seq = time.time_ns()
    split = chunk_many(
        [item.content for item in items], size=mode.chunk_size, overlap=mode.chunk_overlap
    )
    entries: list[Entry] = []
    columns: dict[str, list[Any]] = {name: [] for name in _ROW_FIELDS}
    embed_texts: list[str] = []
    for position, (item, chunks) in enumerate(zip(items, split, strict=True)):
        entry = Entry.model_construct(
            id=item.id or uuid.uuid4().hex,
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
            created_at=_utc(item.created_at or now),
            token_count=chunks.token_count,
        )
        entries.append(entry)
        _append_rows(columns, entry, chunks.texts, base_seq + position)
        embed_texts.extend(index_text(entry.speaker, text) for text in chunks.texts)
    vectors = _embed(ctx, mode, embed_texts)
    table = pa.table(columns).append_column(
        "vector", pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), mode.dims)
    )
    ctx.store.add_rows(bank.id, mode.dims, table)
    if run_hooks:
        for hook in _after_write:
            hook(ctx, bank, {e.key for e in entries})
    return entries


def _embed(ctx: Context, mode: Mode, texts: list[str]) -> Any:
    embedder = ctx.embedder(mode)
    if embedder.dims != mode.dims:
        raise InvalidInput(
            f"embedder {embedder.name} has {embedder.dims} dims, mode needs {mode.dims}"
        )
    return embedder.embed(texts)


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


_ROW_FIELDS = (
    "entry_id", "key", "speaker", "role", "memory_type", "kind", "chunk_index", "chunk_count",
    "text", "content", "tags", "metadata", "attachments", "summary_of", "created_at", "seq",
    "token_count",
)  # fmt: skip


def _json(value: dict[str, Any] | list[dict[str, Any]]) -> str:
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    return json.dumps(value, ensure_ascii=False)


def _append_rows(columns: dict[str, list[Any]], entry: Entry, texts: list[str], seq: int) -> None:
    """Append one row per chunk of `entry` to the column lists (content on chunk 0 only)."""
    metadata, attachments = _json(entry.metadata), _json(entry.attachments)
    for index, text in enumerate(texts):
        values = (
            entry.id, entry.key, entry.speaker, entry.role, entry.memory_type, entry.kind,
            index, len(texts), text, entry.content if index == 0 else None, entry.tags,
            metadata, attachments, entry.summary_of, entry.created_at, seq, entry.token_count,
        )  # fmt: skip
        for name, value in zip(_ROW_FIELDS, values, strict=True):
            columns[name].append(value)


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
    mode = get_mode(bank.mode)
    predicate = filters.conjoin("chunk_index = 0", where)
    table = ctx.store.scan(bank.id, mode.dims, columns=ENTRY_COLUMNS, where=predicate)
    rows = sorted(table.to_pylist(), key=lambda r: (r["created_at"], r["seq"]))
    return [entry_from_row(bank.id, row) for row in rows]


def load(ctx: Context, bank: Bank, key: str) -> list[Entry]:
    """Return the whole thread (every entry) of `key`, oldest first."""
    _check_text("key", key)
    return read(ctx, bank, filters.equals("key", key))


def get_entry(ctx: Context, bank: Bank, entry_id: str) -> Entry:
    """Return one entry by id; NotFound if it does not exist in this bank."""
    found = read(ctx, bank, filters.equals("entry_id", entry_id))
    if not found:
        raise NotFound(f"no entry {entry_id!r} in bank {bank.name!r}")
    return found[0]


def forget(ctx: Context, bank: Bank, entry_id: str) -> Entry:
    """Delete an entry: its text, vectors and attachments, and the old versions holding them."""
    entry = get_entry(ctx, bank, entry_id)
    delete_ids(ctx, bank, [entry_id])
    return entry


def delete_ids(ctx: Context, bank: Bank, entry_ids: Sequence[str], *, prune: bool = True) -> None:
    """Delete every chunk of the given entries in one commit, then prune old versions."""
    if entry_ids:
        mode = get_mode(bank.mode)
        ctx.store.delete_where(
            bank.id, mode.dims, filters.one_of("entry_id", list(entry_ids)), prune=prune
        )
