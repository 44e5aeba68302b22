"""Append entries: validation by bank type, chunking, embedding, one storage commit.

Appending is all this does: compaction of the partitions a write takes over a threshold is the
caller's next step (`memory.ops.entries.write` does both), never a hook run from here.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from memory import banks, purge, validation
from memory.clock import as_utc
from memory.config import Mode
from memory.entries import search_context
from memory.entries.chunking import Chunks, chunk_many
from memory.errors import InvalidInput
from memory.models import Bank, Entry, EntryIn, EntryKind
from memory.store.indices import FTS_COLUMN
from memory.store.schema import CONTEXT_COLUMN, index_text

if TYPE_CHECKING:
    from memory.context import Context

EMBED_BATCH = 256
"""Chunk texts given to the embedder at once (it batches further by length)."""
_JSON = json.JSONEncoder(ensure_ascii=False)
"""What `json.dumps(value, ensure_ascii=False)` uses, made once instead of per call."""


def validate(
    bank: Bank, item: EntryIn, kind: EntryKind = "entry", *, now: datetime | None = None
) -> EntryIn:
    """Return `item` checked against the bank's type as an entry of `kind` would be written
    (only summaries may carry the summary speaker); InvalidInput says what is wrong.

    `now` is the clock's time: with it, a `created_at` too far in the future is refused too
    (see `validation.check_entry`, which holds every rule).
    """
    validation.check_entry(bank, item, kind, now=now)
    return item


def write(
    ctx: Context,
    bank: Bank,
    items: Sequence[EntryIn],
    *,
    kind: EntryKind = "entry",
    summary_of: Sequence[Sequence[str]] | None = None,
    unique: bool = False,
) -> list[Entry]:
    """Validate, chunk, embed and store entries in one commit; returns the stored entries.

    With `unique`, an entry whose id the bank already holds is skipped, atomically per bank
    (`store.add_new_rows`), and left out of the result.

    Nothing is written unless every item is valid. A deletion of this bank whose prune a
    crash or a full disk stopped is finished first, when no one else holds the bank.
    """
    if not items:
        return []
    with _gc_paused():
        now = ctx.clock.now()
        stored_json = [validation.check_entry(bank, item, kind, now=now) for item in items]
        mode = banks.mode_of(bank)
        written, columns, split = _records(ctx, bank, mode, items, stored_json, kind, summary_of)
        embed_texts = [
            index_text(speaker, text)
            for speaker, text in zip(columns["speaker"], columns["text"], strict=True)
        ]
    vectors = _embed(ctx, mode, embed_texts)
    table = pa.table(columns).append_column(
        "vector", pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), mode.dims)
    )
    purge.finish(ctx, bank, wait=0)
    if bank.type != "conversation":
        return _add(ctx, bank, table, written, unique)
    carry = ctx.settings.neighbour_index
    # the turns before ours are read and carried with no deletion in between
    with ctx.store.bank_lock(bank.id, timeout=None) if carry else nullcontext():
        derived = search_context.search_columns(ctx.store, bank, written, split, carry=carry)
        table = table.append_column(FTS_COLUMN, pa.array(derived.search_text, pa.string()))
        table = table.append_column(CONTEXT_COLUMN, pa.array(derived.context_id, pa.string()))
        return _add(ctx, bank, table, written, unique)


def _add(
    ctx: Context, bank: Bank, table: pa.Table, written: list[Entry], unique: bool
) -> list[Entry]:
    """Append the rows; with `unique`, only entries whose id is new (returns those written)."""
    if not unique:
        ctx.store.add_rows(bank.id, table)
        return written
    skipped = ctx.store.add_new_rows(bank.id, table)
    return [entry for entry in written if entry.id not in skipped]


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
) -> tuple[list[Entry], dict[str, list[Any]], list[Chunks]]:
    """Return validated items as entries, the column lists of their chunk rows and their
    chunks (a conversation bank's `search_text` and `context_id` come later, see `write`).

    `stored_json` holds each item's metadata and attachments as `check_entry` returned them.
    """
    now = as_utc(ctx.clock.now())
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
            created_at=now if item.created_at is None else as_utc(item.created_at),
            token_count=chunks.token_count,
        )
        for position, (item, chunks, new_id) in enumerate(
            zip(items, split, _new_ids(len(items)), strict=True)
        )
    ]
    columns = _columns(written, split, stored_json, time.time_ns())
    return written, columns, split


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
