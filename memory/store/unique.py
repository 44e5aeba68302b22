"""Appends that never repeat an entry id: the id check and the append are one step per bank.

Two ingests of one file at once each check a batch's ids, find none stored, and would both
append them. `append_new` checks again under the bank's id lock (held across processes on a
local folder, see `locks`) and appends only the rows whose entry id is neither stored nor
folded into a compaction summary, so the same id is never stored twice.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from memory.store import filters
from memory.store.locks import _named_lock


def append_new(
    uri: str,
    bank_id: str,
    rows: pa.Table,
    *,
    known: Callable[[list[str]], set[str]],
    append: Callable[[pa.Table], None],
) -> set[str]:
    """Append the chunk rows whose entry id `known` does not report; returns the ids skipped.

    `known(ids)` returns which of `ids` the bank holds; it and `append` run under the bank's
    id lock, so no other unique append of the bank comes between them.
    """
    ids = sorted(set(rows.column("entry_id").to_pylist()))
    if not ids:
        return set()
    with _named_lock(uri, f"{bank_id}.ids", None):
        present = known(ids)
        if present:
            keep = pc.invert(pc.is_in(rows.column("entry_id"), pa.array(sorted(present))))
            rows = rows.filter(keep)
        if rows.num_rows:
            append(rows)
    return present


def present_where(ids: list[str]) -> str:
    """Return the predicate of the rows holding any of `ids`, stored or summarised."""
    summarized = f"kind = 'summary' AND array_has_any(summary_of, {filters.list_literal(ids)})"
    return f"({filters.one_of('entry_id', ids)}) OR ({summarized})"
