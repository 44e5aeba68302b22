"""The bank registry: one LanceDB table, a row per bank (id, account, name, type, JSON body)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from memory.models import Bank
from memory.store import filters
from memory.store.connection import Connection
from memory.store.retry import lost_race
from memory.store.schema import BANKS_SCHEMA

REGISTRY = "banks"
LOOKUPS_KEPT = 256
"""Registry look-ups remembered per store (each at the registry version it was read at)."""


class Registry(Connection):
    """The bank registry of a store (`LanceStore` adds the entries tables)."""

    def _registry(self, *, create: bool = True) -> Any:
        return self._small_table(REGISTRY, BANKS_SCHEMA, create=create)

    def put_bank(self, bank: Bank) -> None:
        """Insert or replace a bank record."""
        row = {
            "id": bank.id,
            "account": bank.account,
            "name": bank.name,
            "type": bank.type,
            "body": bank.model_dump_json(),
        }
        self.put_bank_raw(row)

    def put_bank_raw(self, row: dict[str, str]) -> None:
        """Insert or replace a registry row as is (migrations and legacy fixtures)."""
        data = pa.Table.from_pylist([row], schema=BANKS_SCHEMA)
        table = self._registry()
        with self._writing(table):
            (
                table.merge_insert("id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(data)
            )

    def bank_rows(
        self,
        account: str,
        where: str | None = None,
        *,
        bank_id: str | None = None,
        name: str | None = None,
        bank_type: str | None = None,
    ) -> list[dict[str, Any]]:
        """Return the raw registry rows of `account` (parsed `body`), optionally only those
        with this id, name and/or type (`where`, a predicate string, is the old spelling).

        A look-up is remembered with the registry version it read: every create, update and
        delete (in any process) makes a new version, so an answer is reused only while the
        registry is unchanged (a recall or an API request then skips the registry scan).
        """
        where = filters.conjoin(
            where,
            None if bank_id is None else filters.equals("id", bank_id),
            None if name is None else filters.equals("name", name),
            None if bank_type is None else filters.equals("type", bank_type),
        )
        predicate = filters.conjoin(filters.equals("account", account), where)
        registry = self._registry(create=False)
        if registry is None:
            return []
        lookups = self._lookups
        version = int(registry.version)
        seen = lookups.get((account, where))
        if seen is not None and seen[0] == version:
            return [json.loads(body) for body in seen[1]]
        table = self._on_latest(registry, lambda t: t.to_lance().to_table(filter=predicate))
        bodies = table.column("body").to_pylist()
        if len(lookups) >= LOOKUPS_KEPT:
            lookups.clear()
        lookups[(account, where)] = (int(registry.version), bodies)
        return [json.loads(body) for body in bodies]

    def find_bank_rows(
        self,
        account: str,
        *,
        bank_id: str | None = None,
        name: str | None = None,
        bank_type: str | None = None,
    ) -> list[dict[str, Any]]:
        """Return the raw registry rows of `account` with that id, name and type (each given
        one must match; none given: every row of the account)."""
        where = filters.conjoin(
            filters.equals("id", bank_id) if bank_id is not None else None,
            filters.equals("name", name) if name is not None else None,
            filters.equals("type", bank_type) if bank_type is not None else None,
        )
        return self.bank_rows(account, where)

    def all_bank_rows(self) -> list[dict[str, Any]]:
        """Return every registry row of every account (sweeps; never shown to a user)."""
        registry = self._registry(create=False)
        if registry is None:
            return []
        table = self._on_latest(registry, lambda t: t.to_lance().to_table(columns=["body"]))
        return [json.loads(body) for body in table.column("body").to_pylist()]

    def delete_bank_record(self, account: str, bank_id: str) -> None:
        """Remove a bank from the registry and prune the registry's old versions."""
        table = self._registry()
        where = filters.conjoin(filters.equals("account", account), filters.equals("id", bank_id))
        assert where is not None
        with self._writing(table):
            self.tuning.retry.run(
                lambda: table.delete(where), when=lost_race, reset=table.checkout_latest
            )
        self._prune_table(table)
