"""Leases from Prefect's global concurrency limits, over the Prefect server's REST API.

Each lock name is a limit (`membank-<hash>`, made on first use with its slot count); taking
it is `increment-with-lease` (a 423 reply means full: wait and ask again), one background
thread per process renews each held lease every third of its duration, and leaving the block is
`decrement-with-lease`. When the holder dies its lease lapses after `lease_seconds` (the
server refuses less than 60) and the server's repossessor frees the slot on its next pass.

httpx only (no `import prefect`): a CLI process that takes a lease pays a few milliseconds,
not Prefect's import. `PREFECT_API_KEY` (Prefect Cloud) and `PREFECT_API_AUTH_STRING` (a
server started with basic auth) are sent when set.
"""

from __future__ import annotations

import base64
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from memory.errors import StorageError

log = logging.getLogger(__name__)

MIN_LEASE_SECONDS = 60.0
"""The shortest lease the Prefect server grants (it answers 422 below this)."""
FIRST_WAIT = 0.05
LONGEST_WAIT = 1.0
"""A full limit is asked again after FIRST_WAIT seconds, doubling up to LONGEST_WAIT (the
server's Retry-After suits tasks queueing for minutes, not locks held for milliseconds)."""


class PrefectLeases:
    """Leases on the Prefect API at `api_url` (e.g. http://127.0.0.1:4200/api).

    Args:
        api_url: the Prefect API URL (PREFECT_API_URL's form).
        lease_seconds: how long a lease lasts unrenewed (at least 60): how long a dead
            holder keeps others waiting.
        unavailable_seconds: how long a busy or unreachable server is asked again before
            the lock fails (`MEMBANK_LEASE_WAIT_SECONDS`).
        renew_check_seconds: how often the renewing thread looks for leases due for renewal.
    """

    def __init__(
        self,
        api_url: str,
        *,
        lease_seconds: float = MIN_LEASE_SECONDS,
        unavailable_seconds: float = 30.0,
        renew_check_seconds: float = 1.0,
    ) -> None:
        self.where = api_url.rstrip("/")
        self.lease_seconds = max(float(lease_seconds), MIN_LEASE_SECONDS)
        self.unavailable_seconds = unavailable_seconds
        self.renew_check_seconds = renew_check_seconds
        self._client = httpx.Client(base_url=self.where + "/", timeout=30.0, headers=auth_headers())
        self._made: set[str] = set()
        self._made_guard = threading.Lock()
        self._held: dict[str, float] = {}
        """Leases held now, with when each was last renewed (monotonic seconds)."""
        self._held_guard = threading.Lock()
        self._renewer: threading.Thread | None = None

    @contextmanager
    def hold(
        self, name: str, *, slots: int = 1, limit: int = 1, timeout: float | None
    ) -> Iterator[bool]:
        """Hold `slots` of limit `name` for the block (see `LeaseService.hold`)."""
        self._ensure(name, limit)
        lease = self._acquire(name, slots, limit, timeout)
        if lease is None:
            yield False
            return
        with self._held_guard:
            self._held[lease] = time.monotonic()
            self._start_renewer()
        try:
            yield True
        finally:
            with self._held_guard:
                self._held.pop(lease, None)
            self._release(lease)

    def _start_renewer(self) -> None:
        """Start the one thread that renews this process's leases (under `_held_guard`): a
        thread per lease would start and stop a thread on every write."""
        if self._renewer is None or not self._renewer.is_alive():
            self._renewer = threading.Thread(
                target=self._renew_held, name="membank-leases", daemon=True
            )
            self._renewer.start()

    def _renew_held(self) -> None:
        """Renew every held lease a third of its duration after it was last renewed."""
        while True:
            time.sleep(self.renew_check_seconds)
            now = time.monotonic()
            with self._held_guard:
                due = [k for k, at in self._held.items() if now - at >= self.lease_seconds / 3]
            for lease in due:
                if self._renew(lease):
                    with self._held_guard:
                        if lease in self._held:
                            self._held[lease] = now

    def _post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        """POST `body`; a busy server (5xx: its database locked) or a dropped connection is
        asked again for up to `unavailable_seconds` before it is a StorageError."""
        deadline = time.monotonic() + self.unavailable_seconds
        wait = FIRST_WAIT
        while True:
            try:
                reply = self._client.post(path, json=body)
                if reply.status_code < 500 or time.monotonic() > deadline:
                    return reply
            except httpx.TransportError as exc:
                if time.monotonic() > deadline:
                    raise StorageError(
                        f"the lease service at {self.where} cannot be reached ({exc}): start "
                        "the Prefect server, or unset MEMBANK_LEASES"
                    ) from exc
            time.sleep(wait)
            wait = min(wait * 2, LONGEST_WAIT)

    def _ensure(self, name: str, limit: int) -> None:
        if name in self._made:
            return
        reply = self._post("v2/concurrency_limits/", {"name": name, "limit": limit})
        if reply.status_code not in (200, 201, 409):
            raise StorageError(_refused(self.where, "create the limit", reply))
        with self._made_guard:
            self._made.add(name)

    def _acquire(self, name: str, slots: int, limit: int, timeout: float | None) -> str | None:
        body = {
            "names": [name],
            "slots": slots,
            "mode": "concurrency",
            "lease_duration": self.lease_seconds,
        }
        deadline = None if timeout is None else time.monotonic() + timeout
        wait = FIRST_WAIT
        while True:
            reply = self._post("v2/concurrency_limits/increment-with-lease", body)
            if reply.status_code == 200:
                granted = reply.json()
                lease: str = granted["lease_id"]
                if granted.get("limits"):
                    return lease
                # no such limit (the server's database was reset): the server grants a lease
                # on nothing, which excludes no one; make the limit again and ask again
                self._release(lease)
                with self._made_guard:
                    self._made.discard(name)
                self._ensure(name, limit)
                continue
            if reply.status_code != 423:
                raise StorageError(_refused(self.where, "take a lease", reply))
            if deadline is not None and time.monotonic() + wait > deadline:
                return None
            time.sleep(wait)
            wait = min(wait * 2, LONGEST_WAIT)

    def _renew(self, lease: str) -> bool:
        """Renew `lease`; False when it failed (tried again next time, or lapsed)."""
        try:
            reply = self._client.post(
                f"v2/concurrency_limits/leases/{lease}/renew",
                json={"lease_duration": self.lease_seconds},
            )
        except httpx.HTTPError as exc:  # tried again next time; it lapses if this goes on
            log.warning("renewing lease %s failed: %s", lease, exc)
            return False
        if reply.status_code in (404, 410):
            log.error("lease %s lapsed while held: another holder may run now", lease)
            with self._held_guard:
                self._held.pop(lease, None)
            return False
        return reply.status_code < 300

    def _release(self, lease: str) -> None:
        try:
            self._post("v2/concurrency_limits/decrement-with-lease", {"lease_id": lease})
        except StorageError as exc:  # the lease lapses on its own
            log.warning("releasing lease %s failed (it lapses by itself): %s", lease, exc)


def auth_headers() -> dict[str, str]:
    """Return the headers PREFECT_API_KEY or PREFECT_API_AUTH_STRING ask for (none unset)."""
    key = os.environ.get("PREFECT_API_KEY")
    if key:
        return {"Authorization": f"Bearer {key}"}
    basic = os.environ.get("PREFECT_API_AUTH_STRING")
    if basic:
        return {"Authorization": "Basic " + base64.b64encode(basic.encode()).decode()}
    return {}


def _refused(where: str, what: str, reply: httpx.Response) -> str:
    return (
        f"the lease service at {where} refused to {what}: HTTP {reply.status_code} "
        f"{reply.text[:200]}"
    )
