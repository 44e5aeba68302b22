"""What the app holds for its whole life: one store (in the base context), the worker pool
for jobs, the limits; and the per-request Context scoped to the key's account."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from memory import accounts
from memory.accounts import KeyStore
from memory.api.jobs import Jobs
from memory.context import Context


@dataclass(frozen=True)
class ApiLimits:
    """Tuning of the API server (parameters, so tests pass small ones)."""

    max_body: int = 1_048_576
    """Largest request body, in bytes (an entry holds up to 256 kB of text)."""
    workers: int = 2
    """Threads running jobs (exports, compactions, test compactions)."""
    max_pending: int = 16
    """Jobs an account may have queued or running at once; more is a 429."""
    keep_jobs: int = 500
    """Finished jobs remembered (oldest forgotten first, their files deleted)."""
    page_limit: int = 100
    """Default page size of lists."""


@dataclass
class ApiState:
    """The app's one store and pool; `context_for` makes each request's Context.

    Args:
        base: the context every request's is copied from (store, clock, embedder,
            completer, settings); its account is never used.
        keys: where API keys are looked up (default: the base context's store).
        jobs: the worker pool.
        limits: the server's limits.
        exports_dir: where finished export files wait to be downloaded.
    """

    base: Context
    keys: KeyStore
    jobs: Jobs
    limits: ApiLimits
    exports_dir: Path

    def context_for(self, account: str) -> Context:
        """Return a Context on the app's store scoped to `account` (no new connection)."""
        return dataclasses.replace(self.base, account=account)

    def __post_init__(self) -> None:
        self._resolver = accounts.KeyResolver(self.keys)

    def account_for(self, raw_key: str | None) -> str | None:
        """Return the account of an API key; None for a missing, unknown or revoked one."""
        return self._resolver.account(raw_key)
