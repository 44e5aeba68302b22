"""ASGI middleware around every request: request id, body size limit, API version, and a
JSON 500 for anything unexpected (with the request id, so a log line can be found): the
app's only 500 handler."""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Callable
from datetime import date
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory.api import versioning
from memory.api.errors import ErrorBody, ErrorResponse, unexpected_message

log = logging.getLogger("membank.api")
REQUEST_ID = "X-Request-ID"
_SANE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class _TooLarge(Exception):
    pass


def request_id_of(headers: dict[str, str]) -> str:
    """Return the client's request id if sane (1-128 of A-Z a-z 0-9 . _ : -), else a new one."""
    given = headers.get(REQUEST_ID.lower(), "")
    return given if _SANE_ID.match(given) else uuid.uuid4().hex


class Guard:
    """Request id on every response; 413 past `max_body` bytes; `Seclai-Version` resolved
    (400 when bad) and echoed; unexpected exceptions answered as a JSON 500.

    Args:
        app: the application.
        max_body: the largest request body accepted, in bytes.
        today: returns today's date (the server's clock), to tell a future version.
    """

    def __init__(self, app: ASGIApp, *, max_body: int, today: Callable[[], date]) -> None:
        self.app = app
        self.max_body = max_body
        self.today = today

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        rid = request_id_of(headers)
        state = scope.setdefault("state", {})
        state["request_id"] = rid
        extra = [(REQUEST_ID.encode(), rid.encode())]
        try:
            resolved = versioning.resolve(headers.get(versioning.HEADER.lower()), self.today())
        except versioning.BadVersion as exc:
            await answer(send, 400, "invalid_version", str(exc), extra)
            return
        state["api_version"] = resolved
        extra.append((versioning.HEADER.encode(), resolved.label.encode()))
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body:
            await answer(send, 413, "payload_too_large", self._too_large(), extra)
            return
        started = False
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise _TooLarge
            return message

        async def stamped(message: Message) -> None:
            nonlocal started
            if received > self.max_body:  # the app answered an unfinished body: replace it
                if message["type"] == "http.response.start" and not started:
                    started = True
                    await answer(send, 413, "payload_too_large", self._too_large(), extra)
                return
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        try:
            await self.app(scope, counted, stamped)
        except _TooLarge:
            if not started:
                await answer(send, 413, "payload_too_large", self._too_large(), extra)
        except Exception:
            log.exception("request %s failed", rid)
            if not started:
                await answer(send, 500, "internal_error", unexpected_message(rid), extra)

    def _too_large(self) -> str:
        return (
            f"the request body is over {self.max_body:,} bytes: send less "
            "(split a large write into several requests)"
        )


async def answer(
    send: Send, status: int, code: str, message: str, headers: list[tuple[bytes, bytes]]
) -> None:
    """Send a JSON error answer with `headers` added."""
    body = json.dumps(ErrorResponse(error=ErrorBody(code=code, message=message)).model_dump())
    data = body.encode()
    start: dict[str, Any] = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
            *headers,
        ],
    }
    await send(start)
    await send({"type": "http.response.body", "body": data})
