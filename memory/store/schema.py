"""Arrow schemas of the bank registry and of a bank's entries table (one row per chunk)."""

from __future__ import annotations

import pyarrow as pa

from memory.types.entry_text import SPEAKER_SEPARATOR, index_text

__all__ = ["SPEAKER_SEPARATOR", "index_text"]

TIMESTAMP = pa.timestamp("us", tz="UTC")

BANKS_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("account", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("type", pa.string(), nullable=False),
        pa.field("body", pa.string(), nullable=False),
    ]
)
"""The registry: indexed columns for lookups plus the whole bank record as JSON in `body`."""


def entries_schema(dims: int) -> pa.Schema:
    """Return the schema of a bank's entries table with `dims`-wide vectors.

    Each row is one chunk of an entry. Entry-level fields repeat on every chunk row;
    `content` (the whole entry text) is stored on chunk 0 only, `text` holds the chunk and
    `search_text` what the full-text index sees (`index_text` of the speaker and the chunk;
    a conversation turn's also holds its date and, after CONTEXT_SEPARATOR, the turn before
    it, whose entry id is `context_id`: see `memory.store.neighbour_text`).
    """
    return pa.schema(
        [
            pa.field("entry_id", pa.string(), nullable=False),
            pa.field("key", pa.string(), nullable=False),
            pa.field("speaker", pa.string()),
            pa.field("role", pa.string()),
            pa.field("memory_type", pa.string()),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("chunk_index", pa.int32(), nullable=False),
            pa.field("chunk_count", pa.int32(), nullable=False),
            pa.field("text", pa.string(), nullable=False),
            pa.field("content", pa.string()),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("metadata", pa.string()),
            pa.field("attachments", pa.string()),
            pa.field("summary_of", pa.list_(pa.string())),
            pa.field("created_at", TIMESTAMP, nullable=False),
            pa.field("seq", pa.int64(), nullable=False),
            pa.field("token_count", pa.int32(), nullable=False),
            pa.field("search_text", pa.string()),
            pa.field("context_id", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dims)),
        ]
    )


CONTEXT_COLUMN = "context_id"
"""The entry id of the turn a row's `search_text` carries after CONTEXT_SEPARATOR (or null)."""
DERIVED_COLUMNS = ("search_text", CONTEXT_COLUMN, "vector")
"""Columns the store or the embedder derive from the others; never part of an Entry."""

ENTRY_COLUMNS = [f.name for f in entries_schema(1) if f.name not in DERIVED_COLUMNS]
"""Every column but the derived ones: what reads project when they need whole entries."""

CONTEXT_SEPARATOR = "\x1e"
"""Ends a row's own part of `search_text`; what follows is the turn before it (`context_id`),
dropped when that turn is deleted (`memory.store.neighbours`). Never part of a text."""

EMPTY_DIMS = 1
"""Vector width of the empty result a read of a bank with no table returns (no rows)."""
