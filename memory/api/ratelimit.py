"""Per-key request rate limits: each API key may make `limit` requests per `window` seconds
(a token bucket refilled steadily, so a burst up to `limit` is fine); past it a request is a
429 with `Retry-After`. Every answer to a keyed request carries the limit's state in the
IETF draft's fields: `RateLimit-Policy: L;w=W`, `RateLimit-Limit`, `RateLimit-Remaining`,
`RateLimit-Reset` (seconds until the bucket is full again).

Off by default (`MEMBANK_API_RATE_LIMIT=0`). Buckets live in the server process: each
process of a multi-process deployment counts its own requests.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory.accounts import ApiKey
from memory.api.middleware import answer


class Buckets:
    """Token buckets by key id (thread-safe)."""

    def __init__(self, limit: int, window: float, now: Callable[[], float] = time.monotonic):
        self.limit = limit
        self.rate = limit / window
        self.now = now
        self._state: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key_id: str) -> tuple[bool, int, float]:
        """Take one token of `key_id`'s bucket; returns (allowed, remaining, seconds until a
        token is back when refused, or until the bucket is full when allowed)."""
        with self._lock:
            moment = self.now()
            tokens, last = self._state.get(key_id, (float(self.limit), moment))
            tokens = min(float(self.limit), tokens + (moment - last) * self.rate)
            allowed = tokens >= 1.0
            if allowed:
                tokens -= 1.0
            self._state[key_id] = (tokens, moment)
            if len(self._state) > 100_000:  # forget the idlest half of the buckets
                for old in sorted(self._state, key=lambda k: self._state[k][1])[:50_000]:
                    del self._state[old]
        wait = (1.0 - tokens) / self.rate if not allowed else (self.limit - tokens) / self.rate
        return allowed, int(tokens), wait


class RateLimits:
    """ASGI middleware applying `Buckets` to each request's API key.

    Args:
        app: the application.
        key_of: returns the record of an API key (None: not valid: the app answers 401).
        limit: requests per window and key.
        window: the window, in seconds.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        key_of: Callable[[str | None], ApiKey | None],
        limit: int,
        window: int,
    ) -> None:
        self.app = app
        self.key_of = key_of
        self.buckets = Buckets(limit, float(window))
        self.policy = f"{limit};w={window}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = [v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"x-api-key"]
        key = await anyio.to_thread.run_sync(self.key_of, sent[0]) if len(sent) == 1 else None
        if key is None:
            await self.app(scope, receive, send)
            return
        allowed, remaining, wait = self.buckets.take(key.key_id)
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
                f"{round(self.buckets.limit / self.buckets.rate)} s: retry after "
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
