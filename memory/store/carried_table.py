"""The carried-text table of a conversation bank (`memory.store.carried`) on LanceDB: opening
and creating it, appending and deleting its rows, keeping its indices and pruning it with
the entries table (`LanceStore` mixes this in)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from memory.errors import StorageError
from memory.store import audit, carried, indices, neighbours, segments
from memory.store.connection import Connection
from memory.store.indices import FTS_COLUMN
from memory.store.retry import STORAGE_ERRORS, lost_race, race_of
from memory.store.schema import CONTEXT_COLUMN
from memory.types.problems import engine_text

T = TypeVar("T")
SIDE_SEGMENT_ROWS = 8_192
"""Rows a carried table's index segment (and fragment) holds at most (see `_side_tuning`)."""


class CarriedTables(Connection):
    """Each conversation bank's narrow table of carried text, next to its entries table."""

    if TYPE_CHECKING:  # provided by LanceStore

        def _entries(self, bank_id: str) -> Any | None: ...
        def _maintain_if_due(self, table: Any, dataset: Any | None = None) -> None: ...

    def drop_neighbours_of(self, bank_id: str, predicate: str) -> None:
        """Take the turns `predicate` matches out of the index text of the rows that carry
        them in the entries table (a table made before the carried table: `neighbours`), so
        deleting them next leaves no copy; one commit when any."""
        table = self._entries(bank_id)
        if table is None:
            return
        try:
            found = self._on_latest(table, lambda t: neighbours.carriers(t, predicate))
            if not found:
                return
            with self._writing(table):
                self.tuning.retry.run(
                    lambda: neighbours.drop_carried(table, found),
                    when=lost_race,
                    reset=table.checkout_latest,
                )
        except STORAGE_ERRORS as exc:
            raise StorageError(
                f"rewriting the index text of neighbours failed: {engine_text(exc)}"
            ) from exc
        self._maintain_if_due(table)  # the rewritten rows are new rows

    def _carried(self, bank_id: str) -> Any | None:
        """Return the bank's carried-text table at its latest version (None: it has none)."""
        name = carried.table_name(bank_id)
        table = self._tables.get(name)
        if table is None:
            if self._absent() or name not in self._db.list_tables().tables:
                return None
            table = self._tables[name] = self._db.open_table(name)
            return table
        try:
            table.checkout_latest()
        except (ValueError, OSError, RuntimeError):  # dropped by another handle
            self._tables.pop(name, None)
            return self._carried(bank_id)
        return table

    def carried_table(self, bank_id: str) -> Any | None:
        """Return the bank's carried-text table (None: none), to inspect it (tests, benches)."""
        return self._carried(bank_id)

    def carries_apart(self, bank_id: str) -> bool:
        """Return True when the bank keeps carried text in its own table: it has one, or its
        entries table carries nothing in its rows (a new bank; older ones keep theirs)."""
        if self._carried(bank_id) is not None:
            return True
        table = self._entries(bank_id)
        return table is None or not neighbours.carried_in(table)

    def _add_carried(self, bank_id: str, rows: pa.Table) -> None:
        """Append carried rows (creating the table and its indices on first use)."""
        if not rows.num_rows:
            return
        table = self._carried(bank_id)
        if table is None:
            name = carried.table_name(bank_id)
            table = self._open_or_create(name, carried.SCHEMA, prepare=indices.ensure)
            self._tables[name] = table
        step = self._side_tuning.segment_rows
        for start in range(0, rows.num_rows, step):
            self._add_part(table, rows.slice(start, step))
            if self._on_latest(table, lambda t: segments.needs_indexing(t, self._side_tuning)):
                self._maintain_carried(table)

    def _add_part(self, table: Any, part: pa.Table) -> None:
        with self._writing(table):
            self._on_latest(table, lambda t: t.add(part))

    @property
    def _side_tuning(self) -> segments.StoreTuning:
        """The store's tuning with smaller segments: a deletion remaps (rewrites) the
        full-text segments over the fragments it touches, and carried rows are small."""
        rows = min(self.tuning.segment_rows, SIDE_SEGMENT_ROWS)
        return replace(self.tuning, segment_rows=rows)

    def _maintain_carried(self, table: Any, *, merge: bool = False) -> None:
        try:
            with self._writing(table):
                table.checkout_latest()
                segments.index_new_rows(table, self._side_tuning, merge=merge)
        except STORAGE_ERRORS as exc:
            if race_of(exc) is None:
                raise StorageError(f"table maintenance failed: {engine_text(exc)}") from exc
        table.checkout_latest()

    def _on_carried(self, bank_id: str, action: Callable[[Any], T]) -> T | None:
        """Run a read on the bank's carried table (None when it has none)."""
        table = self._carried(bank_id)
        return None if table is None else self._on_latest(table, action)

    def _delete_carried(self, bank_id: str, where: str | None) -> None:
        """Delete the carried rows `where` matches (None: nothing to delete), one commit."""
        table = self._carried(bank_id)
        if table is None or where is None:
            return
        try:
            with self._writing(table):
                self.tuning.retry.run(
                    lambda: table.delete(where), when=lost_race, reset=table.checkout_latest
                )
        except STORAGE_ERRORS as exc:
            raise StorageError(f"deleting carried text failed: {engine_text(exc)}") from exc

    def _prune_carried(self, bank_id: str) -> None:
        """Rewrite the carried table's fragments holding deleted rows, drop old versions."""
        table = self._carried(bank_id)
        if table is None:
            return

        def finish(table: Any) -> None:
            if _mostly_deleted(table.to_lance()):
                _rebuild_after_deletion(table, self._side_tuning)
            else:
                segments.finish_deletion(table, self._side_tuning)

        self._prune_table(table, finish=finish)

    def index_documents(self, bank_id: str) -> pa.Table:
        """Return each chunk row's full-text document as searches see it: `entry_id`,
        `chunk_index`, `text`, `search_text`, `context_id` (a carrier's from the carried
        table); to inspect a bank (tests, benches), not part of the `Store` interface."""
        names = ["entry_id", "chunk_index", "text", FTS_COLUMN, CONTEXT_COLUMN]
        table = self._entries(bank_id)
        if table is None:
            return pa.table({n: pa.array([], pa.string()) for n in names})
        rows = self._on_latest(table, lambda t: t.to_lance().to_table(columns=names))
        side = self._carried(bank_id)
        if side is None:
            return rows
        docs = self._on_latest(side, lambda t: t.to_lance().to_table(columns=carried.DOC))
        at = {pair: n for n, pair in enumerate(carried.pairs(docs))}
        found = [at.get(pair) for pair in carried.pairs(rows)]
        texts, context = [], []
        for n, own in enumerate(found):
            texts.append(rows[FTS_COLUMN][n] if own is None else docs[FTS_COLUMN][own])
            context.append(rows[CONTEXT_COLUMN][n] if own is None else docs[CONTEXT_COLUMN][own])
        rows = rows.set_column(3, FTS_COLUMN, pa.array([v.as_py() for v in texts], pa.string()))
        return rows.set_column(
            4, CONTEXT_COLUMN, pa.array([v.as_py() for v in context], pa.string())
        )

    def _carried_audit(self, bank_id: str) -> audit.DeletionAudit | None:
        table = self._carried(bank_id)
        return (
            None if table is None else self._on_latest(table, lambda t: audit.audit(t.to_lance()))
        )

    def _carried_holds_deleted(self, bank_id: str) -> bool:
        table = self._carried(bank_id)
        if table is None:
            return False
        return bool(self._on_latest(table, lambda t: segments.holds_deleted(t.to_lance())))

    def _drop_carried(self, bank_id: str) -> None:
        name = carried.table_name(bank_id)
        self._tables.pop(name, None)
        if name in self._db.list_tables().tables:
            self._db.drop_table(name)


REBUILD_SHARE = 0.25
"""Share of a carried table's rows in fragments holding deleted rows from which a prune
rebuilds its indices instead of remapping them (remapping a full-text segment cost ~3x
building it afresh: 1.96 s vs 0.63 s over 36k rows, bench/RESULTS.md issue 24)."""


def _mostly_deleted(dataset: Any) -> bool:
    """Return True when fragments holding deleted rows make up REBUILD_SHARE of the rows."""
    touched = total = 0
    for fragment in dataset.get_fragments():
        rows = fragment.metadata.physical_rows
        total += rows
        touched += rows if fragment.metadata.deletion_file else 0
    return total > 0 and touched >= REBUILD_SHARE * total


def _rebuild_after_deletion(table: Any, tuning: segments.StoreTuning) -> None:
    """Rewrite every fragment holding deleted rows without remapping the indices, then
    build both afresh over the live rows (the old index files go with the old versions)."""
    table.to_lance().optimize.compact_files(
        target_rows_per_fragment=tuning.segment_rows,
        materialize_deletions=True,
        materialize_deletions_threshold=0.0,
        defer_index_remap=True,
    )
    table.checkout_latest()
    indices.create_key_index(table)
    indices.create_fts_index(table)
    table.checkout_latest()
