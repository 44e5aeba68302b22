"""Saved compaction test runs: one LanceDB table, a row per run (id, account, bank, time,
JSON body), as the registry keeps banks. Every read is scoped to one account.

A run of a bank's entries holds copies of them, so it records their ids and the oldest one's
time: forgetting an entry, retention, deleting the bank or its source delete the runs that
hold a copy (`delete_lab_runs`), and a deleted entry is not kept here either."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from memory.store import filters
from memory.store.connection import Connection
from memory.store.schema import TIMESTAMP

LAB_RUNS = "lab_runs"
LAB_RUNS_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("account", pa.string(), nullable=False),
        pa.field("bank", pa.string()),
        pa.field("created_at", TIMESTAMP, nullable=False),
        pa.field("entry_ids", pa.list_(pa.string())),
        pa.field("oldest", TIMESTAMP),
        pa.field("body", pa.string(), nullable=False),
    ]
)
"""Indexed columns for lookups plus the whole run record as JSON in `body`."""


class LabRunsStore(Connection):
    """The saved test runs of a store (`LanceStore` inherits it)."""

    def _lab_runs(self, *, create: bool) -> Any:
        table = self._tables.get(LAB_RUNS)
        if table is None:
            if not create and self._absent():
                return None
            try:
                table = self._db.open_table(LAB_RUNS)
            except ValueError:
                if not create:
                    return None
                table = self._db.create_table(LAB_RUNS, schema=LAB_RUNS_SCHEMA, exist_ok=True)
            self._tables[LAB_RUNS] = table
        table.checkout_latest()
        return table

    def put_lab_run(
        self,
        account: str,
        run_id: str,
        bank_id: str | None,
        created_at: datetime,
        body: str,
        *,
        entry_ids: Sequence[str] = (),
        oldest: datetime | None = None,
    ) -> None:
        """Insert or replace a saved test run of `account` (with the stored entries it copies:
        their ids and the oldest one's time)."""
        row = {
            "id": run_id,
            "account": account,
            "bank": bank_id,
            "created_at": created_at,
            "entry_ids": list(entry_ids),
            "oldest": oldest,
            "body": body,
        }
        data = pa.Table.from_pylist([row], schema=LAB_RUNS_SCHEMA)
        table = self._lab_runs(create=True)
        with self._writing(table):
            (
                table.merge_insert("id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(data)
            )

    def lab_run_bodies(self, account: str, bank_id: str | None = None) -> list[str]:
        """Return the JSON bodies of `account`'s saved runs (of one bank), newest first."""
        table = self._lab_runs(create=False)
        if table is None:
            return []
        bank = filters.equals("bank", bank_id) if bank_id is not None else None
        predicate = filters.conjoin(filters.equals("account", account), bank)
        rows = self._on_latest(
            table,
            lambda t: t.to_lance().to_table(columns=["created_at", "body"], filter=predicate),
        ).to_pylist()
        rows.sort(key=lambda row: row["created_at"], reverse=True)
        return [row["body"] for row in rows]

    def delete_lab_runs(
        self,
        account: str,
        bank_id: str | None = None,
        *,
        entry_id: str | None = None,
        before: datetime | None = None,
    ) -> int:
        """Delete `account`'s saved runs for good (old versions too); returns how many.

        Args:
            account: Whose runs.
            bank_id: Only runs of this bank.
            entry_id: Only runs holding a copy of this entry.
            before: Only runs holding an entry created before this time.
        """
        table = self._lab_runs(create=False)
        if table is None:
            return 0
        where = filters.conjoin(
            filters.equals("account", account),
            filters.equals("bank", bank_id) if bank_id is not None else None,
            f"array_has(entry_ids, {filters.literal(entry_id)})" if entry_id is not None else None,
            f"oldest < {filters.timestamp_literal(before)}" if before is not None else None,
        )
        assert where is not None
        count = int(self._on_latest(table, lambda t: t.count_rows(where)))
        if count == 0:
            return 0
        with self._writing(table):
            self.tuning.retry.run(lambda: table.delete(where), reset=table.checkout_latest)
        self._prune_table(table)
        return count
