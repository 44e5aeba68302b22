"""Saved compaction test runs: one LanceDB table, a row per run (id, account, bank, time,
JSON body), as the registry keeps banks. Every read is scoped to one account."""

from __future__ import annotations

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
        self, account: str, run_id: str, bank_id: str | None, created_at: datetime, body: str
    ) -> None:
        """Insert or replace a saved test run of `account`."""
        row = {
            "id": run_id,
            "account": account,
            "bank": bank_id,
            "created_at": created_at,
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

    def delete_lab_runs(self, account: str, bank_id: str | None = None) -> None:
        """Delete `account`'s saved runs (of one bank) for good, old versions included."""
        table = self._lab_runs(create=False)
        if table is None:
            return
        bank = filters.equals("bank", bank_id) if bank_id is not None else None
        where = filters.conjoin(filters.equals("account", account), bank)
        assert where is not None
        with self._writing(table):
            self.tuning.retry.run(lambda: table.delete(where), reset=table.checkout_latest)
        self._prune_table(table)
