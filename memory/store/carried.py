"""The carried text of a conversation bank in a narrow table of its own (issue 24).

A conversation turn's full-text document is its own part (`date\\nspeaker: text`) then
CONTEXT_SEPARATOR and the text of the turn before it (`memory.store.neighbour_text`). Kept
in the entries table, deleting a turn meant rewriting the whole row (vector included) of
the turn carrying it, and those carriers sit in every fragment: a retention of a third of
1M turns took 88.9 s instead of ~2 s. So a bank made since keeps, in its entries table, the
own part only (`context_id` null: nothing to rewrite, so it deletes as a general bank), and
keeps each carrier's whole document in this table, `carried_<bank>`: one narrow row per
carrying chunk, no vector, no content: the carrier's filter columns (`entry_id`, `key`,
`speaker`, `kind`, `tags`, `created_at`, ...), `search_text` (own part + carried turn) and
`context_id` (the carried turn), with its own BTree on `key` and full-text index.

A deletion never rewrites a row here: the rows of the carriers deleted and the rows
carrying a deleted turn are deleted (the carrier keeps its own text, findable in the
entries table), then this table is pruned like the entries table (`segments`).

A full-text search runs on both tables with the same filter and keeps, per chunk, the
better score: a carrier scores by its whole document as before (same documents, nearly the
same corpus), a turn carrying nothing (the first of its key, a summary, one whose carried
turn was deleted) by its own part. Tables made before this layout keep their carried text
in the entries table (`memory.store.neighbours` still takes it out on deletion); a filter
on `content` (not kept here) searches the entries table alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from memory.store import filters, queries
from memory.store.indices import FTS_COLUMN, fts_has_positions
from memory.store.schema import CONTEXT_COLUMN, CONTEXT_SEPARATOR, TIMESTAMP
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.store.neighbour_text import Carried

COLUMNS: list[str] = [
    "entry_id",
    "key",
    "speaker",
    "role",
    "memory_type",
    "kind",
    "chunk_index",
    "tags",
    "summary_of",
    "created_at",
    "seq",
    FTS_COLUMN,
    CONTEXT_COLUMN,
]
"""What a carried row keeps: the carrier's filter columns, its document, the turn carried."""

SCHEMA = pa.schema(
    [
        pa.field("entry_id", pa.string(), nullable=False),
        pa.field("key", pa.string(), nullable=False),
        pa.field("speaker", pa.string()),
        pa.field("role", pa.string()),
        pa.field("memory_type", pa.string()),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("chunk_index", pa.int32(), nullable=False),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("summary_of", pa.list_(pa.string())),
        pa.field("created_at", TIMESTAMP, nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field(FTS_COLUMN, pa.string()),
        pa.field(CONTEXT_COLUMN, pa.string()),
        pa.field("carried_speaker", pa.string()),
        pa.field("carried_tags", pa.list_(pa.string())),
        pa.field("carried_created_at", TIMESTAMP, nullable=False),
    ]
)
CARRIED_COLUMNS: list[str] = ["carried_speaker", "carried_tags", "carried_created_at"]
"""The carried turn's own columns a deletion's filter tests (the same key, kind "entry")."""
OWN_NAMES = {c: c for c in ("entry_id", "key", "speaker", "tags", "created_at", "kind")}
OWN_NAMES["summary_of"] = "summary_of"
CARRIED_NAMES = {
    **OWN_NAMES,
    "entry_id": CONTEXT_COLUMN,
    "speaker": "carried_speaker",
    "tags": "carried_tags",
    "created_at": "carried_created_at",
}
"""A carried row's columns of the turn it carries, by entry column (its key and kind are the
carrier's: a turn carries the turn before it in its own key, and summaries are never carried;
`summary_of` is null for both)."""

ID_LIST_MAX = 2_000
"""Deleted ids matched with one `IN (...)` filter; more are matched in Arrow over a scan."""


def table_name(bank_id: str) -> str:
    """Return the name of a bank's carried-text table."""
    return f"carried_{bank_id}"


def with_carried_columns(rows: pa.Table, turns: Sequence[Carried | None]) -> pa.Table:
    """Return a conversation write's chunk rows with the columns of the turn each carries
    (null where it carries none); the entries table does not keep them."""
    rows = rows.append_column(
        "carried_speaker", pa.array([t and t.speaker for t in turns], pa.string())
    )
    tags = pa.array([t.tags if t else None for t in turns], pa.list_(pa.string()))
    rows = rows.append_column("carried_tags", tags)
    return rows.append_column(
        "carried_created_at", pa.array([t and t.created_at for t in turns], TIMESTAMP)
    )


def carrying(rows: pa.Table) -> bool:
    """Return True when some of the chunk rows carry a turn (a non-null `context_id`)."""
    if CONTEXT_COLUMN not in rows.column_names:
        return False
    return bool(rows.column(CONTEXT_COLUMN).null_count < rows.num_rows)


def split(rows: pa.Table) -> tuple[pa.Table, pa.Table]:
    """Return (entries rows, carried rows) of a conversation write's chunk rows: the entries
    rows keep the own part of `search_text` and a null `context_id`; the carried rows are
    the chunks that carry a turn, with their whole document."""
    missing = [c for c in CARRIED_COLUMNS if c not in rows.column_names]
    if missing:  # a deletion finds carried rows by these: they cannot be left out
        raise ValueError(f"rows carrying a turn lack its columns {', '.join(missing)}")
    carrying = pc.is_valid(rows.column(CONTEXT_COLUMN))
    side = rows.filter(carrying).select([*COLUMNS, *CARRIED_COLUMNS]).cast(SCHEMA)
    text = rows.column(FTS_COLUMN)
    own = pc.if_else(carrying, _own_part(text), text)
    position = rows.schema.get_field_index(FTS_COLUMN)
    rows = rows.set_column(position, rows.schema.field(FTS_COLUMN), own)
    position = rows.schema.get_field_index(CONTEXT_COLUMN)
    nulls = pa.nulls(rows.num_rows, pa.string())
    return rows.set_column(position, rows.schema.field(CONTEXT_COLUMN), nulls), side


def _own_part(text: Any) -> Any:
    """Return each document's part before CONTEXT_SEPARATOR (all of it when it has none)."""
    parts = pc.split_pattern(text, CONTEXT_SEPARATOR, max_splits=1)
    return pc.list_element(parts, 0)


def deleted_where(flt: EntryFilter) -> str | None:
    """Return the predicate of the carried rows a deletion of the entries `flt` matches
    removes: the carriers it matches and the rows carrying a turn it matches; no id list,
    whatever the count (None: `flt` tests a column not kept here, `content`: `doomed_where`)."""
    try:
        own = filters.where_of(flt, OWN_NAMES) or "true"
        carried = filters.where_of(flt, CARRIED_NAMES) or "true"
    except KeyError:
        return None
    return f"({own}) OR ({carried})"


def doomed_where(side: Any, doomed: Sequence[str]) -> str | None:
    """Return the predicate of the carried rows to delete with the entries `doomed`: the
    rows of those carriers and the rows carrying one of them (None: no such row)."""
    if not doomed:
        return None
    if len(doomed) <= ID_LIST_MAX:
        where = f"{filters.one_of('entry_id', doomed)} OR {filters.one_of(CONTEXT_COLUMN, doomed)}"
        return where if side.count_rows(where) else None
    rows = side.to_lance().to_table(columns=["entry_id", CONTEXT_COLUMN])
    ids = pa.array(doomed, pa.string())
    hit = pc.or_(pc.is_in(rows.column("entry_id"), ids), pc.is_in(rows.column(CONTEXT_COLUMN), ids))
    found = pc.unique(rows.column("entry_id").filter(hit)).to_pylist()
    return filters.one_of("entry_id", [str(v) for v in found]) if found else None


def search(
    entries: Any,
    side: Any,
    text: str | None,
    where: str | None,
    limit: int,
    columns: Sequence[str],
    *,
    scope: tuple[str, ...] | None = None,
    key_statistics_rows: int = 0,
    dataset_of: Callable[[Any], Any] = lambda table: table.to_lance(),
) -> pa.Table:
    """Return up to `limit` chunk rows of `columns` ranked by BM25 over both tables (module
    docstring), with `_score`; a carried hit's `context_id` names the turn it carries.

    With a `scope` (keys), each table's words are weighed by the scope's
    statistics in that table, if it holds at most `key_statistics_rows` rows
    (`term_weights`); `dataset_of` opens a table's Lance dataset."""
    wanted = list(dict.fromkeys([*columns, *_KEYS]))

    def ranked(table: Any, fields: list[str]) -> pa.Table:
        if scope is None or key_statistics_rows <= 0:
            return queries.run(table, "fts", None, text, where, limit, fields)
        return queries.run_on_dataset(
            dataset_of(table),
            "fts",
            None,
            text,
            where,
            limit,
            fields,
            has_positions=lambda: fts_has_positions(table),
            scope=scope,
            key_statistics_rows=key_statistics_rows,
        )

    own = ranked(entries, wanted)
    hits = ranked(side, [*_KEYS, CONTEXT_COLUMN])
    if hits.num_rows:
        own = pa.concat_tables([own, _carried_rows(entries, own, hits, wanted)])
    return best_per_chunk(own, limit).select([*columns, "_score"])


_KEYS = ["entry_id", "chunk_index"]
DOC = [*_KEYS, FTS_COLUMN, CONTEXT_COLUMN]
"""A carried row's document and what it carries, by chunk."""


def _carried_rows(entries: Any, own: pa.Table, hits: pa.Table, wanted: list[str]) -> pa.Table:
    """Return the entries rows of the carried `hits` (from `own`, else read), with the
    hits' `context_id` and `_score`, in `own`'s schema."""
    base = [c for c in wanted if c != CONTEXT_COLUMN]
    have = set(own.column("entry_id").to_pylist())
    ids = [str(i) for i in pc.unique(hits.column("entry_id")).to_pylist()]
    missing = [i for i in ids if i not in have]
    rows = own.select(base)
    if missing:
        read = entries.to_lance().to_table(columns=base, filter=filters.one_of("entry_id", missing))
        rows = pa.concat_tables([rows, read.cast(rows.schema)])
    at = {pair: index for index, pair in enumerate(pairs(rows))}
    taken = [(n, at[pair]) for n, pair in enumerate(pairs(hits)) if pair in at]
    picked = rows.take(pa.array([t[1] for t in taken], pa.int64()))
    chosen = hits.take(pa.array([t[0] for t in taken], pa.int64()))
    out = {name: picked.column(name) for name in base}
    if CONTEXT_COLUMN in wanted:
        out[CONTEXT_COLUMN] = chosen.column(CONTEXT_COLUMN)
    out["_score"] = chosen.column("_score")
    return pa.table(out).select(own.column_names).cast(own.schema)


def pairs(rows: pa.Table) -> list[tuple[str, int]]:
    """Return each row's (entry id, chunk number)."""
    ids, chunks = rows.column("entry_id").to_pylist(), rows.column("chunk_index").to_pylist()
    return list(zip(ids, chunks, strict=True))


def best_per_chunk(rows: pa.Table, limit: int) -> pa.Table:
    """Return the best-scoring row of each (entry, chunk), best first, at most `limit`."""
    if not rows.num_rows:
        return rows
    order = pc.sort_indices(rows, sort_keys=[("_score", "descending")])
    rows = rows.take(order)
    seen: set[tuple[str, int]] = set()
    keep: list[int] = []
    for index, pair in enumerate(pairs(rows)):
        if pair not in seen:
            seen.add(pair)
            keep.append(index)
            if len(keep) == limit:
                break
    return rows.take(pa.array(keep, pa.int64()))
