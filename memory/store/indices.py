"""The entries table's indices: a BTree on `key` and a native full-text index on `search_text`.

When new rows are folded into them (maintenance) and the upgrade of tables made before the
`search_text` column existed; how a rewrite rebuilds the segments it touched is in
`segments`.
"""

from __future__ import annotations

import warnings
from typing import Any

from memory.store.schema import SPEAKER_SEPARATOR

FTS_COLUMN = "search_text"
"""Derived column the full-text index covers: `speaker: text` (see `schema.index_text`)."""
FTS_INDEX = "text_idx"
KEY_INDEX = "key_idx"
FTS_PARAMS: dict[str, Any] = {
    "base_tokenizer": "simple",
    "language": "English",
    "with_position": False,
    "max_token_length": 40,
    "lower_case": True,
    "stem": True,
    "remove_stop_words": True,
    "ascii_folding": True,
}
"""The full-text tokenizer (LanceDB's `create_fts_index` defaults), given explicitly so the
first index and every rebuilt segment (`segments.rebuild`) tokenize alike."""
DEFER_REMAP_ROWS = 50_000
"""From this many rows a rewrite defers LanceDB's index remap and the touched segments are
rebuilt instead (a full-text remap costs more than a rebuild on big tables). Smaller tables
are remapped during the rewrite: no deferred-remap record is left for a concurrent process
to race on (one process dropping the record another's rewrite still needs)."""
REMAP_PENDING = "__lance_frag_reuse"
"""LanceDB's record of a compaction whose index remap was deferred: until the touched
segments are rebuilt, reads translate old row addresses through it."""
REINDEX_EVERY = 20_000
"""Rows left unindexed before a write folds them into the indices (search stays correct
meanwhile: unindexed rows are scanned)."""
LOOSE_FRAGMENTS = 16
"""Unindexed fragments (each write makes one) tolerated before a write indexes them: every
unindexed fragment costs each filtered search a scan (measured: 300 one-row fragments took
a key-filtered search on 20k rows from 7 ms to 78 ms; indexed, 12 ms)."""
INDEX_SEGMENTS = 16
"""Small index segments (deltas of recent writes) tolerated before maintenance compacts their
fragments and merges them (`segments.rebuild`). A delta costs ~30 ms to build and a search
~0.4 ms; a merge rebuilds only the small segments and those covering rewritten fragments."""


def needs_maintenance(table: Any) -> bool:
    """Return True when unindexed rows or unindexed fragments have piled up."""
    stats = table.index_stats(KEY_INDEX)
    pending = 0 if stats is None else int(stats.num_unindexed_rows)
    if pending >= REINDEX_EVERY:
        return True
    if pending < LOOSE_FRAGMENTS:  # each unindexed fragment holds at least one such row
        return False
    dataset = table.to_lance()
    indexed: set[int] = set()
    for index in dataset.list_indices():
        if index["name"] == KEY_INDEX:
            indexed.update(index["fragment_ids"])
    loose = sum(1 for f in dataset.get_fragments() if f.fragment_id not in indexed)
    return loose >= LOOSE_FRAGMENTS


def create_key_index(table: Any) -> None:
    """Build (or replace) the BTree index on `key` (partition filters, loads)."""
    table.create_scalar_index("key", index_type="BTREE", replace=True)


def create_fts_index(table: Any) -> None:
    """Build (or replace) the native full-text index over `search_text`."""
    table.create_fts_index(FTS_COLUMN, name=FTS_INDEX, replace=True, **FTS_PARAMS)


def index_names(table: Any) -> set[str]:
    """Return the names of the table's indices, LanceDB's system ones included."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {index["name"] for index in table.to_lance().list_indices()}


def remap_pending(table: Any) -> bool:
    """Return True while a compaction's deferred index remap awaits `segments.rebuild`."""
    return REMAP_PENDING in index_names(table)


def upgrade(table: Any) -> None:
    """Add the derived `search_text` column (and index it) to a table made before it existed."""
    if FTS_COLUMN in table.schema.names:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table.add_columns({FTS_COLUMN: f"concat_ws('{SPEAKER_SEPARATOR}', speaker, text)"})
        if FTS_INDEX in index_names(table):
            table.drop_index(FTS_INDEX)
        create_fts_index(table)
