"""Per-key request rate limits: each API key may make `limit` requests per `window` seconds
(a token bucket refilled steadily, so a burst up to `limit` is fine); past it a request is a
429 with `Retry-After`. Every answer to a keyed request carries the limit's state in the
IETF draft's fields: `RateLimit-Policy: L;w=W`, `RateLimit-Limit`, `RateLimit-Remaining`,
`RateLimit-Reset` (seconds until the bucket is full again).

Off by default (`MEMBANK_API_RATE_LIMIT=0`). The buckets are in a SQLite file every API
process of the machine shares (`memory.api.rate_store`): beside local storage the limit
holds across all processes over it; on object storage, across the processes of one machine.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory.accounts import ApiKey
from memory.api.middleware import answer
from memory.api.rate_store import SharedBuckets


class RateLimits:
    """ASGI middleware applying the shared token buckets to each request's API key.

    Args:
        app: the application.
        key_of: returns the record of an API key (None: not valid: the app answers 401).
        buckets: the buckets (their limit and window are the policy).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        key_of: Callable[[str | None], ApiKey | None],
        buckets: SharedBuckets,
    ) -> None:
        self.app = app
        self.key_of = key_of
        self.buckets = buckets
        self.policy = f"{buckets.limit};w={round(buckets.window)}".encode()

    def _take(self, raw_key: str) -> tuple[ApiKey, tuple[bool, int, float]] | None:
        """Return the key's record and a token taken of its bucket (None: not a valid key)."""
        key = self.key_of(raw_key)
        return None if key is None else (key, self.buckets.take(key.key_id))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = [v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"x-api-key"]
        try:
            taken = await anyio.to_thread.run_sync(self._take, sent[0]) if len(sent) == 1 else None
        except sqlite3.Error:
            message = "the rate limits' counters cannot be read now: retry shortly"
            await answer(send, 503, "storage_error", message, [(b"retry-after", b"1")])
            return
        if taken is None:
            await self.app(scope, receive, send)
            return
        key, (allowed, remaining, wait) = taken
        headers = [
            (b"ratelimit-policy", self.policy),
            (b"ratelimit-limit", str(self.buckets.limit).encode()),
            (b"ratelimit-remaining", str(remaining).encode()),
            (b"ratelimit-reset", str(math.ceil(wait)).encode()),
        ]
        if not allowed:
            retry = str(max(1, math.ceil(wait))).encode()
            message = (
                f"key {key.key_id} made more than {self.buckets.limit} requests in "
                f"{round(self.buckets.window)} s: retry after "
                f"{retry.decode()} s (Retry-After)"
            )
            await answer(
                send, 429, "too_many_requests", message, [*headers, (b"retry-after", retry)]
            )
            return

        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *headers]
            await send(message)

        await self.app(scope, receive, stamped)
