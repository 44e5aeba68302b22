"""The idempotency table: the first response to a write sent with an `Idempotency-Key`, kept
so a retry with the same key gets it back instead of writing again (`memory.api.idempotency`
holds the rules; this module only keeps rows).

One row per (account, idempotency key): a `pending` row while the first request runs (a
retry arriving at another process then waits its turn), then the answer (`done`). Rows are
in storage, so a retry that reaches another process or a restarted server is answered too.
`LanceStore` inherits `IdempotencyTable`. Deleting rows prunes old versions: a stored
answer may hold entry text, and a forgotten entry must leave no copy.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pyarrow as pa

from memory.store import filters
from memory.store.connection import Connection
from memory.store.schema import TIMESTAMP

IDEMPOTENCY_TABLE = "idempotency"

IDEMPOTENCY_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("account", pa.string(), nullable=False),
        pa.field("idempotency_key", pa.string(), nullable=False),
        pa.field("fingerprint", pa.string(), nullable=False),
        pa.field("state", pa.string(), nullable=False),
        pa.field("owner", pa.string(), nullable=False),
        pa.field("status", pa.int32()),
        pa.field("headers", pa.string()),
        pa.field("body", pa.binary()),
        pa.field("created_at", TIMESTAMP, nullable=False),
    ]
)
"""`id` (a digest of account and key), the request's fingerprint (method, path, body),
`pending` or `done`, the process that owns a pending row, and the answer (status, headers
as JSON, body)."""


class IdempotencyTable(Connection):
    """Stored first answers of idempotent requests (rows only)."""

    def _idempotency(self, *, create: bool) -> Any:
        return self._small_table(IDEMPOTENCY_TABLE, IDEMPOTENCY_SCHEMA, create=create)

    def idempotency_row(self, row_id: str) -> dict[str, Any] | None:
        """Return the row with `row_id` (None: none)."""
        table = self._idempotency(create=False)
        if table is None:
            return None
        predicate = filters.equals("id", row_id)
        found: pa.Table = self._on_latest(table, lambda t: t.to_lance().to_table(filter=predicate))
        rows: list[dict[str, Any]] = found.to_pylist()
        return rows[0] if rows else None

    def reserve_idempotency_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """Insert `row` unless a row with its id exists; return the row stored now (`row`
        itself when it won, the other one when another request holds the id)."""
        data = pa.Table.from_pylist([row], schema=IDEMPOTENCY_SCHEMA)
        table = self._idempotency(create=True)
        with self._writing(table):
            self._on_latest(
                table,
                lambda t: t.merge_insert("id").when_not_matched_insert_all().execute(data),
            )
        return self.idempotency_row(row["id"]) or row

    def put_idempotency_row(self, row: dict[str, Any]) -> None:
        """Insert or replace `row` (matched on `id`)."""
        data = pa.Table.from_pylist([row], schema=IDEMPOTENCY_SCHEMA)
        table = self._idempotency(create=True)
        with self._writing(table):
            self._on_latest(
                table,
                lambda t: (
                    t.merge_insert("id")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute(data)
                ),
            )

    def idempotency_rows(self, account: str) -> list[dict[str, Any]]:
        """Return the account's rows (without their bodies' bytes decoded)."""
        table = self._idempotency(create=False)
        if table is None:
            return []
        predicate = filters.equals("account", account)
        found: pa.Table = self._on_latest(table, lambda t: t.to_lance().to_table(filter=predicate))
        rows: list[dict[str, Any]] = found.to_pylist()
        return rows

    def delete_idempotency_rows(
        self, *, ids: list[str] | None = None, before: datetime | None = None
    ) -> None:
        """Delete the rows with these ids and/or created before `before`, for good (pruned)."""
        table = self._idempotency(create=False)
        if table is None or (not ids and before is None):
            return
        predicate = filters.conjoin(
            filters.one_of("id", ids) if ids else None,
            f"created_at < {filters.timestamp_literal(before)}" if before is not None else None,
        )
        with self._writing(table):
            self._on_latest(table, lambda t: t.delete(predicate))
        self._prune_table(table)
