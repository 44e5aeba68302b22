"""Paged entry reads: one page of the entries a filter matches, oldest first, at a cost of
the page (not of the whole partition).

A page is found from two small columns of the matching first-chunk rows (`created_at`,
`seq`: the order every load uses), sorted in Arrow; only the page's entries are then read
whole (content, metadata, tags). A cursor is the (created_at, seq) of the last entry shown,
so a page after it stays right while entries are written (appended after it) or deleted.
`LanceStore` mixes this in (`memory.ports.EntryStore.entry_page`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from memory.store import filters
from memory.store.connection import Connection
from memory.store.rows import entries_of
from memory.store.schema import ENTRY_COLUMNS
from memory.types.entry_filter import EntryFilter
from memory.types.fields import as_utc
from memory.types.pages import EntryPage, PageAfter


class EntryPages(Connection):
    """A page of entries by filter, read at the cost of the page."""

    if TYPE_CHECKING:  # provided by LanceStore

        def scan(
            self, bank_id: str, *, columns: Sequence[str] = ..., where: str | None = None
        ) -> pa.Table: ...

    def entry_page(
        self,
        bank_id: str,
        flt: EntryFilter | None,
        *,
        limit: int,
        offset: int = 0,
        after: PageAfter | None = None,
    ) -> EntryPage:
        """Return `limit` entries `flt` matches, oldest first, after `after` (a cursor) or
        from `offset` (when no cursor)."""
        if flt is not None and flt.matches_nothing:
            return EntryPage([], 0, None)
        where = filters.heads_of(flt)
        order = self.scan(bank_id, columns=["created_at", "seq"], where=where)
        total = order.num_rows
        if total == 0:
            return EntryPage([], 0, None)
        order = order.sort_by([("created_at", "ascending"), ("seq", "ascending")])
        start = offset if after is None else _position_after(order, after)
        shown = order.slice(start, limit)
        if shown.num_rows == 0:
            return EntryPage([], total, None)
        seqs = shown.column("seq").to_pylist()
        page_where = filters.conjoin(where, f"seq IN ({', '.join(str(int(s)) for s in seqs)})")
        rows = self.scan(bank_id, columns=ENTRY_COLUMNS, where=page_where).to_pylist()
        found = entries_of(bank_id, rows)
        end = start + shown.num_rows
        last = shown.slice(shown.num_rows - 1, 1).to_pylist()[0]
        following = PageAfter(as_utc(last["created_at"]), int(last["seq"])) if end < total else None
        return EntryPage(found, total, following)


def _position_after(order: pa.Table, after: PageAfter) -> int:
    """Return the index of the first row of the sorted `order` past `after`."""
    when = pa.scalar(as_utc(after.created_at), type=order.schema.field("created_at").type)
    created = order.column("created_at")
    later = pc.greater(created, when)
    same_later = pc.and_(pc.equal(created, when), pc.greater(order.column("seq"), after.seq))
    past = pc.or_(later, same_later)
    index = pc.index(past, True).as_py()
    return order.num_rows if index is None or index < 0 else int(index)
