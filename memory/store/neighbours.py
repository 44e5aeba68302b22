"""A conversation turn's index text carries the turn before it; deleting that turn drops it.

A turn's `search_text` is its own part, then CONTEXT_SEPARATOR and the text of the turn
before it in the same key, whose entry id is in `context_id` (written by
`memory.store.neighbour_text`). Questions often need both halves of an exchange ("What
did Ann recommend?" answered by "Try the Basque place" after "Any dinner tips?"), so the
full-text index finds a turn by its neighbour's words too.

Deletion must stay final: before the rows of a deletion go, every other row carrying one of
them gets its own part back (one SQL update, `split_part` on the separator) and a null
`context_id`. The update rewrites those rows, so the old copies are deleted rows that the
deletion's prune removes from the data and index files like the deleted rows themselves;
the rewritten rows are folded into the full-text index as appended ones are. A table whose
rows carry nothing (general banks, tables from before) costs one null-statistics check.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from memory.store import filters
from memory.store.indices import FTS_COLUMN
from memory.store.schema import CONTEXT_COLUMN, CONTEXT_SEPARATOR

ID_LIST_MAX = 2_000
"""Deleted ids looked up with one `IN (...)` filter; more scan every carrier and match in
Arrow (a full scan of two columns beats a filter of a long list)."""
OWN_PART = f"split_part({FTS_COLUMN}, chr({ord(CONTEXT_SEPARATOR)}), 1)"
"""SQL for a row's own part of `search_text` (all of it when it carries no turn)."""


def carriers(table: Any, predicate: str) -> list[str]:
    """Return the ids of the entries outside `predicate` whose index text carries a turn that
    `predicate` deletes (empty for a table whose rows carry none)."""
    lance = table.to_lance()
    if CONTEXT_COLUMN not in lance.schema.names or not _any_carried(lance):
        return []
    doomed = _ids(lance.to_table(columns=["entry_id"], filter=predicate), "entry_id")
    if not doomed:
        return []
    if len(doomed) <= ID_LIST_MAX:
        where = filters.one_of(CONTEXT_COLUMN, doomed)
        rows = lance.to_table(columns=["entry_id", CONTEXT_COLUMN], filter=where)
    else:
        rows = lance.to_table(
            columns=["entry_id", CONTEXT_COLUMN], filter=f"{CONTEXT_COLUMN} IS NOT NULL"
        )
        rows = rows.filter(pc.is_in(rows.column(CONTEXT_COLUMN), pa.array(doomed)))
    found = set(_ids(rows, "entry_id"))
    return sorted(found.difference(doomed))


def carried_in(table: Any) -> bool:
    """Return True when some row of the entries table carries a turn (a table made before
    carried text moved to a table of its own, `memory.store.carried`)."""
    lance = table.to_lance()
    return CONTEXT_COLUMN in lance.schema.names and _any_carried(lance)


def drop_carried(table: Any, entry_ids: Sequence[str]) -> None:
    """Give the rows of `entry_ids` their own index text back and a null `context_id`, in
    one commit (LanceDB rewrites those rows whole: one commit of many ids is several times
    faster than many commits of few, bench/RESULTS.md issue 14)."""
    where = filters.conjoin(filters.one_of("entry_id", entry_ids), f"{CONTEXT_COLUMN} IS NOT NULL")
    table.update(
        where=where, values_sql={FTS_COLUMN: OWN_PART, CONTEXT_COLUMN: "CAST(NULL AS STRING)"}
    )


def _any_carried(lance: Any) -> bool:
    """Return True when some row carries a turn (a few ms when none does: null statistics)."""
    found = lance.scanner(
        columns=[CONTEXT_COLUMN], filter=f"{CONTEXT_COLUMN} IS NOT NULL", limit=1
    ).to_table()
    return bool(found.num_rows)


def _ids(rows: pa.Table, column: str) -> list[str]:
    """Return the distinct non-null strings of one column."""
    values = pc.unique(rows.column(column).drop_null())
    return [str(v) for v in values.to_pylist()]
