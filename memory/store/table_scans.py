"""Chunk-row scans of the LanceDB store's entry tables: rows by predicate (whole or streamed
in batches), counts, and the table's versions (`LanceStore` mixes this in)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from memory.store.connection import Connection
from memory.store.locks import reading
from memory.store.schema import EMPTY_DIMS, ENTRY_COLUMNS, entries_schema


class TableScans(Connection):
    """Rows of a bank's entries table, read from its latest version."""

    if TYPE_CHECKING:  # provided by LanceStore

        def _entries(self, bank_id: str) -> Any | None: ...

    def old_version_count(self, bank_id: str) -> int:
        """Return how many versions besides the latest the bank's table keeps (0 when final)."""
        return max(self.version_count(bank_id) - 1, 0)

    def version_count(self, bank_id: str) -> int:
        """Return how many versions of the bank's table are kept (tests of pruning)."""
        table = self._entries(bank_id)
        return 0 if table is None else len(table.list_versions())

    def table_version(self, bank_id: str) -> int | None:
        """Return the latest version number of the bank's table (None: it has no table)."""
        table = self._entries(bank_id)
        return None if table is None else int(table.version)

    def scan(
        self,
        bank_id: str,
        *,
        columns: Sequence[str] = ENTRY_COLUMNS,
        where: str | None = None,
    ) -> pa.Table:
        """Return the matching rows with only `columns` (an empty table if unprovisioned)."""
        table = self._entries(bank_id)
        if table is None:
            return entries_schema(EMPTY_DIMS).empty_table().select(list(columns))
        result: pa.Table = self._on_latest(
            table, lambda t: t.to_lance().to_table(columns=list(columns), filter=where)
        )
        return result

    def scan_batches(
        self,
        bank_id: str,
        *,
        columns: Sequence[str] = ENTRY_COLUMNS,
        where: str | None = None,
        batch_size: int = 10_000,
        batch_bytes: int | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Yield matching rows in order, in batches, so callers stream whatever the size.

        The stream reads one table version from start to end; prunes of the table (in any
        process on this machine) wait for it, so its files stay in place meanwhile.
        """
        table = self._entries(bank_id)
        if table is None:
            return
        with reading(self.uri, table.name):
            table.checkout_latest()
            yield from table.to_lance().to_batches(
                columns=list(columns),
                filter=where,
                batch_size=batch_size,
                batch_size_bytes=batch_bytes,
                scan_in_order=True,
            )

    def count(self, bank_id: str, where: str | None = None) -> int:
        """Return the number of chunk rows matching `where`."""
        table = self._entries(bank_id)
        return 0 if table is None else int(self._on_latest(table, lambda t: t.count_rows(where)))
