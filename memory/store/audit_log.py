"""The audit log table: one row per authenticated change made through the API (which key,
which account, what action on what target, when, the request id and the answer's status).

It never holds entry text or a user's id (`memory.ops.audit` pseudonymises user ids before
a row is written), so a per-user wipe leaves nothing of the user here. `LanceStore`
inherits `AuditLogTable`; `memory.ops.audit` holds the rules.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pyarrow as pa
from lance.dataset import ColumnOrdering

from memory.store import filters
from memory.store.connection import Connection
from memory.store.schema import TIMESTAMP

AUDIT_TABLE = "audit_log"

AUDIT_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("account", pa.string(), nullable=False),
        pa.field("key_id", pa.string(), nullable=False),
        pa.field("action", pa.string(), nullable=False),
        pa.field("target", pa.string(), nullable=False),
        pa.field("status", pa.int32(), nullable=False),
        pa.field("request_id", pa.string(), nullable=False),
        pa.field("at", TIMESTAMP, nullable=False),
    ]
)
"""A row's id (time-ordered), the account and key, the action (`POST /memory_banks/{bank_id}
/entries`), its target (ids), the HTTP status, the request id and the time."""


class AuditLogTable(Connection):
    """Audit rows of every account (rows only)."""

    def append_audit_rows(self, rows: list[dict[str, Any]]) -> None:
        """Append rows (one commit)."""
        if not rows:
            return
        data = pa.Table.from_pylist(rows, schema=AUDIT_SCHEMA)
        table = self._small_table(AUDIT_TABLE, AUDIT_SCHEMA, create=True)
        with self._writing(table):
            self._on_latest(table, lambda t: t.add(data))

    def audit_rows(
        self,
        account: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        before_id: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Return up to `limit` rows of `account`, newest first, older than row `before_id`
        (a page cursor) and within [since, until)."""
        table = self._small_table(AUDIT_TABLE, AUDIT_SCHEMA, create=False)
        if table is None:
            return []
        predicate = filters.conjoin(
            filters.equals("account", account),
            f"at >= {filters.timestamp_literal(since)}" if since is not None else None,
            f"at < {filters.timestamp_literal(until)}" if until is not None else None,
            f"id < {filters.literal(before_id)}" if before_id is not None else None,
        )
        newest_first = [ColumnOrdering("id", ascending=False)]  # ids are time-ordered
        found: pa.Table = self._on_latest(
            table,
            lambda t: t.to_lance().to_table(filter=predicate, order_by=newest_first, limit=limit),
        )  # sorted and cut in Lance: only the page's rows reach Python
        rows: list[dict[str, Any]] = found.to_pylist()
        return rows
