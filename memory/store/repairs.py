"""Repairs of stored rows `membank maintain` runs: one copy of each entry stored twice (an
old concurrent-ingest bug), tags added to rows written before a layout stored them. Both
append the repaired copy first, then delete the older ones: a crash in between leaves an
extra copy, never none."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from memory.store import duplicates, filters, locks
from memory.types.entry_filter import EntryFilter


class Repairs:
    """The repairs of `LanceStore` (a mixin over its scans, appends and deletes)."""

    if TYPE_CHECKING:  # provided by LanceStore
        uri: str

        def _entries(self, bank_id: str) -> Any | None: ...
        def has_entries_table(self, bank_id: str) -> bool: ...
        def scan(
            self,
            bank_id: str,
            *,
            columns: Sequence[str] = ...,
            where: str | None = None,
        ) -> pa.Table: ...
        def add_rows(self, bank_id: str, rows: pa.Table) -> None: ...
        def delete_where(
            self,
            bank_id: str,
            predicate: str,
            *,
            prune: bool = True,
            flt: EntryFilter | None = None,
            carried_too: bool = True,
        ) -> None: ...

    def duplicate_entry_ids(self, bank_id: str) -> list[str]:
        """Return the ids stored as more than one entry (an old concurrent-ingest bug)."""
        if not self.has_entries_table(bank_id):
            return []
        firsts = self.scan(bank_id, columns=["entry_id"], where=filters.HEAD_ROWS)
        return duplicates.repeated(firsts.column("entry_id").to_pylist())

    def keep_one_copy(self, bank_id: str, entry_ids: Sequence[str]) -> None:
        """Keep one copy of each entry stored more than once: append one, then delete the
        older copies (`duplicates`: a crash in between leaves an extra copy, never none)."""
        if not entry_ids:
            return
        table = self._entries(bank_id)
        if table is None:
            return
        where = filters.one_of("entry_id", list(entry_ids))
        rows = self.scan(bank_id, columns=table.schema.names, where=where)
        kept, marker = duplicates.one_copy(rows)
        self.add_rows(bank_id, kept)
        self.delete_where(
            bank_id, f"({where}) AND seq < {int(marker)}", prune=True, carried_too=False
        )

    def add_tags(self, bank_id: str, flt: EntryFilter, tags: Sequence[str]) -> int:
        """Add `tags` to every entry `flt` matches (rows written before a layout stored them,
        `membank maintain`); returns how many entries were rewritten.

        Under the bank's lock, like `keep_one_copy`: one tagged copy of each chunk is
        appended with a fresh `seq`, then the older copies are deleted and pruned (a crash in
        between leaves two copies, which the next `maintain` keeps once). Ids, text, vectors
        and index text are kept as they are.
        """
        table = self._entries(bank_id)
        if table is None or flt.matches_nothing or not tags:
            return 0
        where = filters.where_of(flt) or "true"
        with locks.bank_lock(self.uri, bank_id, timeout=None):
            rows = self.scan(bank_id, columns=table.schema.names, where=where)
            if rows.num_rows == 0:
                return 0
            kept, marker = duplicates.one_copy(rows)
            tagged = [
                list(dict.fromkeys([*(old or []), *tags])) for old in kept["tags"].to_pylist()
            ]
            field = kept.schema.field("tags")
            kept = kept.set_column(
                kept.schema.get_field_index("tags"), field, pa.array(tagged, field.type)
            )
            self.add_rows(bank_id, kept)
            self.delete_where(
                bank_id, f"({where}) AND seq < {int(marker)}", prune=True, carried_too=False
            )
        return len(set(kept["entry_id"].to_pylist()))
