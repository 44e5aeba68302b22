"""ASGI middleware writing the audit log: every authenticated change (a route needing the
write or admin scope), whatever its answer, is one row: key id, account, action (method and
route), target (the path's ids, the id made), status, request id, time. Never a body: no
entry text reaches the log. Reads (and searches) are not logged."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory.api import scopes
from memory.ops import audit
from memory.ops.audit import AuditRows

log = logging.getLogger("membank.api")
CHANGES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_MADE_MAX = 65_536
"""Largest answer looked at for the id of what a request made."""


class Audit:
    """Logs each authenticated change after its answer is sent.

    Args:
        app: the application.
        rows: where the log is kept.
        now: the server's clock.
    """

    def __init__(self, app: ASGIApp, *, rows: AuditRows, now: Callable[[], datetime]) -> None:
        self.app = app
        self.rows = rows
        self.now = now

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in CHANGES:
            await self.app(scope, receive, send)
            return
        status = 0
        body: list[bytes] = []
        held: list[Message] = []

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                if status == 201 and _room(body):
                    body.append(message.get("body", b""))
                if not message.get("more_body", False):
                    held.append(message)  # logged first: a client that got the answer
                    return  # finds the change in the log
            await send(message)

        try:
            await self.app(scope, receive, watched)
        finally:
            await self._log(scope, status or 500, b"".join(body))
            for message in held:
                await send(message)

    async def _log(self, scope: Scope, status: int, body: bytes) -> None:
        state: dict[str, Any] = scope.get("state", {})
        key = state.get("api_key")
        route = getattr(scope.get("route"), "path", None)
        if key is None or route is None or scopes.needed(scope["method"], route) == "read":
            return
        made = _made_id(body)
        target = audit.target_of(key.account, scope.get("path_params", {}), made)

        def write() -> None:
            try:
                audit.record(
                    self.rows,
                    account=key.account,
                    key_id=key.key_id,
                    action=f"{scope['method']} {route}",
                    target=target,
                    status=status,
                    request_id=str(state.get("request_id", "")),
                    at=self.now(),
                )
            except Exception:  # the answer is sent: a log failure must show in the server log
                log.exception("audit log write failed for request %s", state.get("request_id"))

        await anyio.to_thread.run_sync(write)


def _room(body: list[bytes]) -> bool:
    return sum(len(b) for b in body) < _MADE_MAX


def _made_id(body: bytes) -> str | None:
    if not body:
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    made = data.get("id") if isinstance(data, dict) else None
    return made if isinstance(made, str) and len(made) <= 128 else None
