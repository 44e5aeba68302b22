"""Leases that hold across machines: the lock service `memory.store.locks` uses on object
storage when one is configured.

A lease is a slot of a named limit held for a while and renewed while its holder lives; a
holder that dies (even by `kill -9`) stops renewing, and the slot frees when the lease
lapses. The one service today is Prefect's global concurrency limits (`MEMBANK_LEASES=prefect`,
`MEMBANK_LEASE_URL` or else `PREFECT_API_URL` naming the Prefect API), reached over its REST
API with httpx on first use, so a process that never takes a lease never imports either
(the `membank` CLI's start-up stays as it was).

Without a service (`MEMBANK_LEASES` unset or `none`) `configured()` returns None and object
storage keeps its per-process locks (see `memory.store.locks` for what that does not
guarantee).
"""

from __future__ import annotations

import os
import threading
from contextlib import AbstractContextManager
from typing import Protocol

from memory.errors import InvalidInput

__all__ = ["LeaseService", "configured", "use"]

SERVICES = ("none", "prefect")


class LeaseService(Protocol):
    """Named limits whose slots are held as leases."""

    where: str
    """Where the service is, for messages (its API URL)."""

    def hold(
        self, name: str, *, slots: int, limit: int, timeout: float | None
    ) -> AbstractContextManager[bool]:
        """Hold `slots` of the limit `name` (made with `limit` slots if it does not exist)
        for the block, renewing the lease meanwhile; yields False if not got in `timeout`
        seconds (0: try once; None: wait as long as it takes).

        Raises:
            StorageError: the service cannot be reached or refused the request.
        """
        ...


_ENV = (
    "MEMBANK_LEASES",
    "MEMBANK_LEASE_URL",
    "MEMBANK_LEASE_SECONDS",
    "MEMBANK_LEASE_WAIT_SECONDS",
    "PREFECT_API_URL",
)
_cache: dict[tuple[str | None, ...], LeaseService | None] = {}
_chosen: list[LeaseService | None] = []
_guard = threading.Lock()


def use(service: LeaseService | None) -> None:
    """Make `service` this process's lease service whatever the environment says (tests,
    embedding); `use(None)` forgets that, so the environment chooses again."""
    with _guard:
        _chosen.clear()
        if service is not None:
            _chosen.append(service)


def configured() -> LeaseService | None:
    """Return the lease service the settings name, or None when there is none.

    Read from the environment on each call (cheap: the service is made once per distinct
    setting), so a test or a worker that sets MEMBANK_LEASES later is seen.

    Raises:
        InvalidInput: MEMBANK_LEASES names no known service, or `prefect` without an API URL.
    """
    if _chosen:
        return _chosen[0]
    key = tuple(os.environ.get(name) for name in _ENV)
    with _guard:
        if key not in _cache:
            _cache[key] = _make()
        return _cache[key]


def _make() -> LeaseService | None:
    from memory.settings import Settings

    settings = Settings()
    kind = settings.leases.strip().lower()
    if kind not in SERVICES:
        raise InvalidInput(
            f"MEMBANK_LEASES={settings.leases!r} is not a lease service: use "
            + " or ".join(SERVICES)
        )
    if kind == "none":
        return None
    url = settings.lease_url or os.environ.get("PREFECT_API_URL")
    if not url:
        raise InvalidInput(
            "MEMBANK_LEASES=prefect needs the Prefect API: set MEMBANK_LEASE_URL or "
            "PREFECT_API_URL (e.g. http://127.0.0.1:4200/api)"
        )
    from memory.leases.prefect import PrefectLeases

    return PrefectLeases(
        url, lease_seconds=settings.lease_seconds, unavailable_seconds=settings.lease_wait_seconds
    )
