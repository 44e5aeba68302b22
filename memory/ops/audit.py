"""The audit log's use cases: record an authenticated change (who, what, on what, when, the
request id), list an account's log (newest first, a page at a time).

A row never holds entry text or a user's id: targets are ids from the request's path, and a
user id is replaced by a digest of (account, user) before anything is written, so a
per-user wipe leaves nothing of the user in the log, while an admin can still see that the
same user was touched twice.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, cast

from pydantic import BaseModel

from memory.validation import as_utc

if TYPE_CHECKING:
    from memory.context import Context

PSEUDONYMISED = ("user", "user_id")
"""Path parameters that name a person: stored only as a digest."""
_COUNTER = itertools.count()
_COUNTER_LOCK = threading.Lock()


class AuditRows(Protocol):
    """Where audit rows live (`memory.store.audit_log.AuditLogTable`)."""

    def append_audit_rows(self, rows: list[dict[str, Any]]) -> None: ...

    def audit_rows(
        self,
        account: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        before_id: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]: ...


class AuditEvent(BaseModel):
    """One authenticated change."""

    id: str
    """Time-ordered: the cursor of the next page is the last id shown."""
    account: str
    key_id: str
    action: str
    """The method and route, e.g. `POST /memory_banks/{bank_id}/entries`."""
    target: str
    """What it touched: the path's ids (`bank_id=...`) and the id it made (`id=...`)."""
    status: int
    request_id: str
    at: datetime


def pseudonym(account: str, value: str) -> str:
    """Return the digest that stands for a user id in the log."""
    return "u_" + hashlib.sha256(f"{account}\x00{value}".encode()).hexdigest()[:16]


def target_of(account: str, params: Mapping[str, Any], made: str | None) -> str:
    """Return the target text of a change: its path ids (users as digests), and the id made."""
    parts = [
        f"{name}={pseudonym(account, str(value)) if name in PSEUDONYMISED else value}"
        for name, value in sorted(params.items())
    ]
    if made:
        parts.append(f"id={made}")
    return " ".join(parts)


def _row_id(at: datetime) -> str:
    with _COUNTER_LOCK:
        n = next(_COUNTER) % 1_000_000
    return f"{at:%Y%m%dT%H%M%S%f}-{n:06d}-{uuid.uuid4().hex[:6]}"


def record(
    rows: AuditRows,
    *,
    account: str,
    key_id: str,
    action: str,
    target: str,
    status: int,
    request_id: str,
    at: datetime,
) -> AuditEvent:
    """Append one event to the log and return it."""
    when = as_utc(at)
    event = AuditEvent(
        id=_row_id(when),
        account=account,
        key_id=key_id,
        action=action,
        target=target,
        status=status,
        request_id=request_id,
        at=when,
    )
    rows.append_audit_rows([event.model_dump()])
    return event


def events(
    ctx: Context,
    *,
    limit: int = 100,
    cursor: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[AuditEvent]:
    """Return the context account's events, newest first, older than `cursor` (an id)."""
    store = cast(AuditRows, ctx.store)
    found = store.audit_rows(
        ctx.account,
        since=as_utc(since, "since") if since else None,
        until=as_utc(until, "until") if until else None,
        before_id=cursor,
        limit=limit,
    )
    return [AuditEvent(**{**r, "at": as_utc(r["at"])}) for r in found]
