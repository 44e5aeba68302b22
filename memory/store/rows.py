"""Entries to chunk rows and back: the one place an `Entry` becomes stored rows (`rows_of`)
and a stored row becomes an `Entry` (`entry_from_row`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from memory.models import Entry
from memory.store import indices
from memory.store.schema import CONTEXT_COLUMN, SPEAKER_SEPARATOR


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


def with_search_text(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """Return `rows` with the derived `search_text` column, cast to `schema` (its order).

    A `search_text` the writer gave (a turn with its context) is kept; where it is missing
    or null, `speaker: text` is derived. A missing `context_id` (no turn before) is null.
    """
    given = None
    if indices.FTS_COLUMN in rows.column_names:
        given = rows.column(indices.FTS_COLUMN).cast(pa.string())
        rows = rows.drop_columns([indices.FTS_COLUMN])
    speaker = rows.column("speaker").cast(pa.string())
    speaker = pc.if_else(pc.equal(speaker, ""), pa.scalar(None, pa.string()), speaker)
    text = rows.column("text").cast(pa.string())
    joined = pc.binary_join_element_wise(speaker, text, SPEAKER_SEPARATOR, null_handling="skip")
    if given is not None:
        joined = pc.coalesce(given, joined)
    rows = rows.append_column(indices.FTS_COLUMN, joined)
    if CONTEXT_COLUMN not in rows.column_names:  # only a conversation turn's write has one
        rows = rows.append_column(CONTEXT_COLUMN, pa.nulls(rows.num_rows, pa.string()))
    return rows.select(schema.names).cast(schema)
