"""The entries table's indices: a BTree on `key`, a native full-text index on `search_text`,
and (past a size, `vector_index`) an IVF_FLAT index on `vector`.

How they are created, read back (`describe_indices`) and upgraded for tables made before the
`search_text` column existed. When new rows are folded into them and how their segments
stay bounded is in `maintenance`.
"""

from __future__ import annotations

from typing import Any

from lancedb.index import FTS, BTree, IvfFlat

from memory.store.schema import CONTEXT_COLUMN, SPEAKER_SEPARATOR

FTS_COLUMN = "search_text"
"""Derived column the full-text index covers: `speaker: text` (see `schema.index_text`)."""
FTS_INDEX = "text_idx"
KEY_INDEX = "key_idx"
VECTOR_INDEX = "vector_idx"
ID_INDEX = "entry_id_idx"
"""A BTree on `entry_id`, built with the vector index (`vector_index`): the exact-score
look-ups of a whole-bank hybrid search (`entry_id IN (...)`) use it instead of a scan."""
SEGMENTED = (KEY_INDEX, FTS_INDEX, VECTOR_INDEX, ID_INDEX)
"""The indices whose segments final deletion rewrites (an absent one has no segments)."""
FTS_CONFIG = FTS(
    base_tokenizer="simple",
    language="English",
    with_position=True,
    max_token_length=40,
    lower_case=True,
    stem=True,
    remove_stop_words=True,
    ascii_folding=True,
)
"""The full-text tokenizer (LanceDB's defaults, given explicitly so an upgrade of LanceDB
that changes them does not change how a bank's text is tokenized), with token positions so
quoted phrase queries (`"water tank"`) work once rows are indexed (without positions the
index refuses them: tables made before positions are rebuilt by `membank maintain`)."""


def create_key_index(table: Any) -> None:
    """Build (or replace) the BTree index on `key` (partition filters, loads)."""
    table.create_index("key", config=BTree(), name=KEY_INDEX, replace=True)


def create_fts_index(table: Any) -> None:
    """Build (or replace) the native full-text index over `search_text`."""
    table.create_index(FTS_COLUMN, config=FTS_CONFIG, name=FTS_INDEX, replace=True)


def create_id_index(table: Any) -> None:
    """Build (or replace) the BTree index on `entry_id` (look-ups of given entries)."""
    table.create_index("entry_id", config=BTree(), name=ID_INDEX, replace=True)


def create_vector_index(table: Any, partitions: int) -> None:
    """Build (or replace) the IVF_FLAT index on `vector` with `partitions` cosine clusters."""
    config = IvfFlat(distance_type="cosine", num_partitions=partitions)
    table.create_index("vector", config=config, name=VECTOR_INDEX, replace=True)


def fts_has_positions(table: Any) -> bool:
    """Return whether the full-text index keeps token positions (phrase queries need them);
    True when there is no index yet (unindexed rows are searched without one)."""
    for index in table.to_lance().describe_indices():
        if index.name == FTS_INDEX:
            return bool((index.details or {}).get("with_position", False))
    return True


def ensure_positions(table: Any) -> bool:
    """Rebuild the full-text index of a table made before it kept positions; return whether
    it was rebuilt."""
    if fts_has_positions(table):
        return False
    create_fts_index(table)
    return True


def index_names(table: Any) -> set[str]:
    """Return the names of the table's indices."""
    return {index.name for index in table.to_lance().describe_indices()}


def ensure(table: Any) -> None:
    """Create the key and full-text indices a new entries table lacks."""
    existing = index_names(table)
    if KEY_INDEX not in existing:
        create_key_index(table)
    if FTS_INDEX not in existing:
        create_fts_index(table)


def upgrade(table: Any) -> None:
    """Add the derived columns a table made before they existed lacks: `search_text` (and
    its index), then `context_id` (null: its rows carry no turn before them)."""
    names = table.schema.names
    if FTS_COLUMN not in names:
        table.add_columns({FTS_COLUMN: f"concat_ws('{SPEAKER_SEPARATOR}', speaker, text)"})
        if FTS_INDEX in index_names(table):
            table.drop_index(FTS_INDEX)
        create_fts_index(table)
    if CONTEXT_COLUMN not in names:
        table.add_columns({CONTEXT_COLUMN: "CAST(NULL AS STRING)"})
