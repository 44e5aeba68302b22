"""Idempotent writes: a change (POST, PUT, PATCH, DELETE) sent with an `Idempotency-Key`
header runs once per account and key; a retry with the same key gets the first answer back
(`Idempotent-Replayed: true`) and stores nothing twice, whether the first is done or still
running (a client that timed out and retried waits for the first request's answer).

The first answer is kept in storage (`memory.store.idempotency`) for `hold` (24 h by
default), scoped to the key's account and the endpoint (method and path): another account's
same key, or the same key on another endpoint, is another request. Only
a success (2xx) is kept; an error leaves nothing, so a retry runs again. The same key with
another request (query, body, `If-Match` or `Seclai-Version`) is a 422. A key held by a
request still running in another process is a 409 with `Retry-After`. A successful deletion
drops the account's kept answers that name what it deleted, so no copy of a forgotten entry
stays.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory.api.errors import ErrorBody, ErrorResponse

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
CHANGES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_SANE = re.compile(r"^[\x21-\x7e]{1,255}$")
_OWNER = uuid.uuid4().hex
"""This process: a pending row of another owner is a request running elsewhere."""


class IdempotencyRows(Protocol):
    """Where kept answers live (`memory.store.idempotency.IdempotencyTable`)."""

    def idempotency_row(self, row_id: str) -> dict[str, Any] | None: ...

    def reserve_idempotency_row(self, row: dict[str, Any]) -> dict[str, Any]: ...

    def put_idempotency_row(self, row: dict[str, Any]) -> None: ...

    def idempotency_rows(self, account: str) -> list[dict[str, Any]]: ...

    def delete_idempotency_rows(
        self, *, ids: list[str] | None = None, before: datetime | None = None
    ) -> None: ...


def row_id(account: str, key: str, method: str = "", path: str = "") -> str:
    """Return the stored row's id of (account, key, method, path): a key is one request of
    one endpoint, so the same key on another endpoint (or on a method the API does not
    serve, a 405) is another request."""
    return hashlib.sha256(f"{account}\x00{key}\x00{method}\x00{path}".encode()).hexdigest()


class Idempotency:
    """ASGI middleware making changes with an `Idempotency-Key` run once.

    Args:
        app: the application.
        rows: where answers are kept.
        account_for: returns the account of an API key (None: not valid: the app answers).
        now: the server's clock.
        hold: how long an answer is kept (at least 24 h is what clients are told).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        rows: IdempotencyRows,
        account_for: Callable[[str | None], str | None],
        now: Callable[[], datetime],
        hold: timedelta = timedelta(hours=24),
    ) -> None:
        self.app = app
        self.rows = rows
        self.account_for = account_for
        self.now = now
        self.hold = hold
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, rid: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(rid, threading.Lock())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in CHANGES:
            await self.app(scope, receive, send)
            return
        sent = [v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"idempotency-key"]
        keys = [v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"x-api-key"]
        if not sent:
            await self._forget_deleted(scope, receive, send, keys)
            return
        if len(sent) > 1 or not _SANE.match(sent[0]):
            await _error(send, 400, "invalid_input", f"send one {HEADER}: 1-255 visible characters")
            return
        account = await anyio.to_thread.run_sync(self.account_for, keys[0]) if keys else None
        if account is None or len(keys) != 1:
            await self.app(scope, receive, send)  # the app answers 401 / 400
            return
        body = await _read_body(receive)
        print_ = _fingerprint(scope, body)
        rid = row_id(account, sent[0], scope["method"], str(scope.get("path", "")))
        lock = self._lock(rid)
        await anyio.to_thread.run_sync(lock.acquire)
        try:
            await self._once(scope, send, body, account, sent[0], rid, print_)
        finally:
            lock.release()

    async def _once(
        self,
        scope: Scope,
        send: Send,
        body: bytes,
        account: str,
        key: str,
        rid: str,
        fingerprint: str,
    ) -> None:
        now = self.now()
        found = await anyio.to_thread.run_sync(self.rows.idempotency_row, rid)
        if found is not None and _aware(found["created_at"]) < now - self.hold:
            await anyio.to_thread.run_sync(lambda: self.rows.delete_idempotency_rows(ids=[rid]))
            found = None
        if found is None:
            mine = {
                "id": rid,
                "account": account,
                "idempotency_key": key,
                "fingerprint": fingerprint,
                "state": "pending",
                "owner": _OWNER,
                "status": None,
                "headers": None,
                "body": None,
                "created_at": now,
            }
            found = await anyio.to_thread.run_sync(self.rows.reserve_idempotency_row, mine)
            if found["owner"] == _OWNER and found["state"] == "pending":
                await self._run(scope, send, body, mine)
                return
        if found["fingerprint"] != fingerprint:
            await _error(
                send,
                422,
                "invalid_request",
                f"this {HEADER} was sent with another request (query, body, If-Match or "
                "Seclai-Version): use a new key for a new request",
            )
            return
        if found["state"] != "done":
            await _error(
                send,
                409,
                "conflict",
                f"a request with this {HEADER} is still running: retry in a moment",
                [(b"retry-after", b"1")],
            )
            return
        await _replay(send, found)

    async def _run(self, scope: Scope, send: Send, body: bytes, row: dict[str, Any]) -> None:
        """Run the request once; keep a 2xx answer before its last byte goes out, so a
        retry (or a forget) arriving after the client got the answer finds it kept."""
        status = 0
        headers: list[tuple[bytes, bytes]] = []
        chunks: list[bytes] = []
        held: list[Message] = []
        gone = False

        async def forward(message: Message) -> None:
            nonlocal gone
            if gone:
                return
            try:
                await send(message)
            except OSError:  # the client went away (timed out): finish and keep the answer
                gone = True

        async def capture(message: Message) -> None:
            nonlocal status, headers
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers", []))
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    held.append(message)  # sent once the answer is kept
                    return
            await forward(message)

        try:
            await self.app(scope, _replayed_body(body), capture)
        finally:
            if 200 <= status < 300:
                kept = {
                    **row,
                    "state": "done",
                    "status": status,
                    "headers": json.dumps(
                        [[k.decode("latin-1"), v.decode("latin-1")] for k, v in headers]
                    ),
                    "body": b"".join(chunks),
                }
                await anyio.to_thread.run_sync(self.rows.put_idempotency_row, kept)
            else:
                rid = row["id"]
                await anyio.to_thread.run_sync(lambda: self.rows.delete_idempotency_rows(ids=[rid]))
            for message in held:
                await forward(message)

    async def _forget_deleted(
        self, scope: Scope, receive: Receive, send: Send, keys: list[str]
    ) -> None:
        """Run a change with no key; after a successful DELETE, drop the account's kept
        answers naming what it deleted (a forgotten entry's text leaves no copy here),
        before the answer's last byte goes out."""
        if scope["method"] != "DELETE" or len(keys) != 1:
            await self.app(scope, receive, send)
            return
        status = 0
        held: list[Message] = []

        async def seen(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                held.append(message)
                return
            await send(message)

        try:
            await self.app(scope, receive, seen)
            if 200 <= status < 300:
                account = await anyio.to_thread.run_sync(self.account_for, keys[0])
                names = [p for p in str(scope.get("path", "")).split("/") if len(p) >= 3]
                if account is not None:
                    await anyio.to_thread.run_sync(lambda: self._drop_naming(account, names))
        finally:
            for message in held:
                await send(message)

    def _drop_naming(self, account: str, names: list[str]) -> None:
        rows = self.rows.idempotency_rows(account)
        wanted = [n.encode("utf-8", "surrogatepass") for n in names]
        hit = [
            r["id"]
            for r in rows
            if any(n in (r["body"] or b"") for n in wanted if n not in (b"memory_banks", b"users"))
        ]
        if hit:
            self.rows.delete_idempotency_rows(ids=hit)


def _aware(value: datetime) -> datetime:
    from memory.validation import as_utc

    return as_utc(value)


FINGERPRINT_HEADERS = (b"if-match", b"seclai-version")
"""Headers that change what a request does: the same key with another of them is another
request (a replay would answer a condition or a version the client did not send)."""


def _fingerprint(scope: Scope, body: bytes) -> str:
    digest = hashlib.sha256()
    for part in (scope["method"], scope.get("path", ""), scope.get("query_string", b"")):
        digest.update(part if isinstance(part, bytes) else str(part).encode())
        digest.update(b"\x00")
    digest.update(body)
    sent = sorted((n.lower(), v) for n, v in scope.get("headers", []))
    for name, value in sent:  # none of them: the digest is as it was before they counted
        if name in FINGERPRINT_HEADERS:
            digest.update(b"\x00" + name + b":" + value)
    return digest.hexdigest()


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replayed_body(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    return receive


async def _replay(send: Send, row: dict[str, Any]) -> None:
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in json.loads(row["headers"])]
    kept = [h for h in headers if h[0].lower() not in (b"x-request-id", b"seclai-version")]
    await send(
        {
            "type": "http.response.start",
            "status": int(row["status"]),
            "headers": [*kept, (REPLAYED.lower().encode(), b"true")],
        }
    )
    await send({"type": "http.response.body", "body": bytes(row["body"] or b"")})


async def _error(
    send: Send,
    status: int,
    code: str,
    message: str,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    data = json.dumps(ErrorResponse(error=ErrorBody(code=code, message=message)).model_dump())
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data.encode()})
