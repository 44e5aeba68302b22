"""Saved compaction test runs: one LanceDB table, a row per run (id, account, bank, time,
JSON body), as the registry keeps banks. Every read is scoped to one account.

A run of a bank's entries holds copies of them, so it records their ids: every final deletion
of entries (forget, retention, compaction, a user's wipe: `EntryStore.delete_final`) first
deletes the runs holding a copy of one (`delete_lab_copies`), and deleting a bank or its
source deletes its runs, so a deleted entry is not kept here either."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

from memory.store import filters
from memory.store.connection import Connection
from memory.store.retry import lost_race
from memory.store.schema import TIMESTAMP

LAB_RUNS = "lab_runs"
LAB_RUNS_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("account", pa.string(), nullable=False),
        pa.field("bank", pa.string()),
        pa.field("created_at", TIMESTAMP, nullable=False),
        pa.field("entry_ids", pa.list_(pa.string())),
        pa.field("body", pa.string(), nullable=False),
    ]
)
"""Indexed columns for lookups plus the whole run record as JSON in `body`."""


class LabRunsStore(Connection):
    """The saved test runs of a store (`LanceStore` inherits it)."""

    def _lab_runs(self, *, create: bool) -> Any:
        return self._small_table(LAB_RUNS, LAB_RUNS_SCHEMA, create=create)

    def put_lab_run(
        self,
        account: str,
        run_id: str,
        bank_id: str | None,
        created_at: datetime,
        body: str,
        *,
        entry_ids: Sequence[str] = (),
    ) -> None:
        """Insert or replace a saved test run of `account` (with the ids of the stored entries
        it holds copies of)."""
        row = {
            "id": run_id,
            "account": account,
            "bank": bank_id,
            "created_at": created_at,
            "entry_ids": list(entry_ids),
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

    def update_lab_run_body(self, account: str, run_id: str, body: str) -> bool:
        """Replace the JSON body of one saved run of `account` (its bank, time and the ids of
        the entries it copies stay); returns False when there is no such run."""
        table = self._lab_runs(create=False)
        if table is None:
            return False
        where = filters.conjoin(filters.equals("account", account), filters.equals("id", run_id))
        assert where is not None
        if int(self._on_latest(table, lambda t: t.count_rows(where))) == 0:
            return False
        with self._writing(table):
            self.tuning.retry.run(
                lambda: table.update(where=where, values={"body": body}),
                when=lost_race,
                reset=table.checkout_latest,
            )
        return True  # the old body's version goes with the next deletion's prune

    def delete_lab_run(self, account: str, run_id: str) -> bool:
        """Delete one saved run of `account` for good; returns False when there was none."""
        where = filters.conjoin(filters.equals("account", account), filters.equals("id", run_id))
        assert where is not None
        return self._delete_runs(where) > 0

    def delete_lab_runs(self, account: str, bank_id: str | None = None) -> int:
        """Delete `account`'s saved runs (of one bank) for good, old versions too; returns
        how many there were."""
        bank = filters.equals("bank", bank_id) if bank_id is not None else None
        where = filters.conjoin(filters.equals("account", account), bank)
        assert where is not None
        return self._delete_runs(where)

    def delete_lab_copies(self, account: str, bank_id: str, predicate: str) -> int:
        """Delete the saved runs holding a copy of an entry of the bank that `predicate`
        matches (before those entries are deleted for good); returns how many.

        Cheap when no run of the bank holds stored entries: one read of the runs table.
        """
        table = self._lab_runs(create=False)
        if table is None:
            return 0
        mine = filters.conjoin(filters.equals("account", account), filters.equals("bank", bank_id))
        held = self._on_latest(
            table, lambda t: t.to_lance().to_table(columns=["entry_ids"], filter=mine)
        )
        ids = sorted({i for row in held.column("entry_ids").to_pylist() for i in row or []})
        if not ids:
            return 0
        matching = filters.conjoin(predicate, filters.one_of("entry_id", ids))
        # `scan` is the entries tables' (LanceStore), which this mixin is part of
        copied = self.scan(bank_id, columns=["entry_id"], where=matching)  # type: ignore[attr-defined]
        hit = sorted(set(copied.column("entry_id").to_pylist()))
        if not hit:
            return 0
        return self._delete_runs(
            filters.conjoin(mine, f"array_has_any(entry_ids, {filters.list_literal(hit)})") or ""
        )

    def _delete_runs(self, where: str) -> int:
        table = self._lab_runs(create=False)
        if table is None:
            return 0
        count = int(self._on_latest(table, lambda t: t.count_rows(where)))
        if count == 0:
            return 0
        with self._writing(table):
            self.tuning.retry.run(
                lambda: table.delete(where), when=lost_race, reset=table.checkout_latest
            )
        self._prune_table(table)
        return count
