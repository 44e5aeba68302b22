"""The API keys table: one row per key (public id, account, sha256 of the key, times).

Only the hash of a key is stored, never the key itself (`memory.accounts` makes and checks
keys). `LanceStore` inherits `KeyTable`, so the keys live in the same database as the banks.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from memory.store import filters
from memory.store.connection import Connection
from memory.store.schema import TIMESTAMP

KEYS_TABLE = "api_keys"

KEYS_SCHEMA = pa.schema(
    [
        pa.field("key_id", pa.string(), nullable=False),
        pa.field("account", pa.string(), nullable=False),
        pa.field("key_hash", pa.string(), nullable=False),
        pa.field("created_at", TIMESTAMP, nullable=False),
        pa.field("revoked_at", TIMESTAMP),
        pa.field("scopes", pa.string()),
        pa.field("banks", pa.string()),
    ]
)
"""A key's public id (shown in listings and in the key itself), its account, the hex sha256
of the whole key, when it was made and when it was revoked (null: still valid), its scopes
(comma-separated; null: a key made before scopes, the account's administrator) and the bank
ids it is limited to (a JSON list; null: every bank of the account)."""
ADDED_COLUMNS = ("scopes", "banks")
"""Columns a keys table made by an older version lacks: added (null) when it is opened."""


class KeyTable(Connection):
    """The API keys of a store (rows only: `memory.accounts` holds the rules)."""

    def _keys(self, *, create: bool) -> Any:
        opened = KEYS_TABLE in self._tables
        table = self._small_table(KEYS_TABLE, KEYS_SCHEMA, create=create)
        if table is not None and not opened:  # a table made before these columns existed
            missing = [c for c in ADDED_COLUMNS if c not in table.schema.names]
            if missing:
                table.add_columns([KEYS_SCHEMA.field(c) for c in missing])
        return table

    def put_key_row(self, row: dict[str, Any]) -> None:
        """Insert or replace a key row (matched on `key_id`)."""
        full = {"scopes": None, "banks": None, **row}
        data = pa.Table.from_pylist([full], schema=KEYS_SCHEMA)
        table = self._keys(create=True)
        with self._writing(table):
            self._on_latest(
                table,
                lambda t: (
                    t.merge_insert("key_id")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute(data)
                ),
            )

    def key_rows(
        self, *, account: str | None = None, key_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Return the key rows of `account` and/or with `key_id` (every row when neither)."""
        table = self._keys(create=False)
        if table is None:
            return []
        predicate = filters.conjoin(
            filters.equals("account", account) if account is not None else None,
            filters.equals("key_id", key_id) if key_id is not None else None,
        )
        rows: pa.Table = self._on_latest(table, lambda t: t.to_lance().to_table(filter=predicate))
        found: list[dict[str, Any]] = rows.to_pylist()
        return found

    def key_table_version(self) -> int | None:
        """Return the keys table's latest version (None: no table): it changes on every
        create and revoke, so a resolver may cache lookups made at one version."""
        table = self._keys(create=False)
        return None if table is None else int(table.version)
