"""Entries to chunk rows and back: the one place an `Entry` becomes stored rows (`rows_of`)
and a stored row becomes an `Entry` (`entry_from_row`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory.models import Entry


def entry_from_row(bank_id: str, row: dict[str, Any]) -> Entry:
    """Return the Entry of a first-chunk row (the row carrying the entry's whole content):
    `Entry.from_fields` under the stored column names."""
    return Entry.from_fields(bank_id, {**row, "id": row["entry_id"], "chunk_text": row["text"]})


def entries_of(bank_id: str, rows: list[dict[str, Any]]) -> list[Entry]:
    """Return the entries of first-chunk rows, oldest first (by time, then write order)."""
    ordered = sorted(rows, key=lambda r: (r["created_at"], r["seq"]))
    return [entry_from_row(bank_id, row) for row in ordered]


def rows_of(
    written: Sequence[Entry],
    split: Sequence[Sequence[str]],
    stored_json: Sequence[tuple[str, str]],
    seq: int,
) -> dict[str, list[Any]]:
    """Return the column lists of the chunk rows of `written`, one row per chunk of `split`
    (content on chunk 0 only); `stored_json` is each entry's metadata and attachments as
    JSON, `seq` the write order of the first row."""
    chunk_index = [index for chunks in split for index in range(len(chunks))]
    if len(chunk_index) == len(written):  # one chunk each, the common case
        owners, rows = list(written), list(range(len(written)))
    else:
        rows = [position for position, chunks in enumerate(split) for _ in chunks]
        owners = [written[position] for position in rows]
    counts = [len(split[position]) for position in rows]
    return {
        "entry_id": [e.id for e in owners],
        "key": [e.key for e in owners],
        "speaker": [e.speaker for e in owners],
        "role": [e.role for e in owners],
        "memory_type": [e.memory_type for e in owners],
        "kind": [e.kind for e in owners],
        "chunk_index": chunk_index,
        "chunk_count": counts,
        "text": [text for chunks in split for text in chunks],
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
