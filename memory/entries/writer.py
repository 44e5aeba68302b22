"""Append entries: validation by bank type, chunking, embedding, one storage commit.

Appending is all this does: compaction of the partitions a write takes over a threshold is the
caller's next step (`memory.ops.entries.write` does both), never a hook run from here.
"""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from memory import banks, validation
from memory.clock import as_utc
from memory.config import Mode
from memory.entries.chunking import Chunks, chunk_many
from memory.errors import InvalidInput
from memory.models import Bank, Entry, EntryIn, EntryKind
from memory.types.entry_text import index_text

if TYPE_CHECKING:
    from memory.context import Context

EMBED_BATCH = 256
"""Chunk texts given to the embedder at once (it batches further by length)."""


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
    finish_deletions: bool = True,
) -> list[Entry]:
    """Validate, chunk, embed and store entries in one commit; returns the stored entries.

    With `unique`, an entry whose id the bank already holds is skipped, atomically per bank
    (`store.add_new_rows`), and left out of the result.

    Nothing is written unless every item is valid. A deletion of this bank whose prune a
    crash or a full disk stopped is finished first by the store (`EntryStore.append`),
    unless `finish_deletions` is False (a sweep's summary: the sweep prunes the bank after).
    """
    if not items:
        return []
    with _gc_paused():
        now = as_utc(ctx.clock.now())  # one instant: validated against and dated with
        stored_json = [validation.check_entry(bank, item, kind, now=now) for item in items]
        mode = banks.mode_of(bank)
        written, split = _records(bank, mode, items, kind, summary_of, now)
        embed_texts = [
            index_text(entry.speaker, text)
            for entry, chunks in zip(written, split, strict=True)
            for text in chunks.texts
        ]
    vectors = _embed(ctx, mode, embed_texts)
    turns = bank.type == "conversation"
    return ctx.store.append(
        bank.id,
        written,
        [chunks.texts for chunks in split],
        vectors,
        stored_json=stored_json,
        turns=turns,
        carry=turns and ctx.settings.neighbour_index,
        carry_within=timedelta(hours=ctx.settings.neighbour_within_hours),
        unique=unique,
        finish_deletions=finish_deletions,
    )


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
    bank: Bank,
    mode: Mode,
    items: Sequence[EntryIn],
    kind: EntryKind,
    summary_of: Sequence[Sequence[str]] | None,
    now: datetime,
) -> tuple[list[Entry], list[Chunks]]:
    """Return validated items as entries written at `now` and their chunks."""
    split = chunk_many(
        [item.content for item in items], size=mode.chunk_size, overlap=mode.chunk_overlap
    )
    written = [
        _entry(
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
            created_at=now if item.created_at is None else as_utc(item.created_at),
            token_count=chunks.token_count,
        )
        for position, (item, chunks) in enumerate(zip(items, split, strict=True))
    ]
    return written, split


_ENTRY_FIELDS = frozenset(Entry.model_fields)


def _entry(**values: Any) -> Entry:
    """Return an Entry of trusted values, every field given: `Entry.model_construct` without
    its per-field alias and default handling. Kept because it pays end to end: 20,000
    entries build in 0.21 s against model_construct's 0.72 s, about a seventh of a bulk
    write (bench/RESULTS.md, issue 19 session 10)."""
    entry = Entry.__new__(Entry)
    object.__setattr__(entry, "__dict__", values)
    object.__setattr__(entry, "__pydantic_fields_set__", set(_ENTRY_FIELDS))
    object.__setattr__(entry, "__pydantic_extra__", None)
    object.__setattr__(entry, "__pydantic_private__", None)
    return entry


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
