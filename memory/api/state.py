"""What the app holds for its whole life: one store (in the base context), the job runner,
the limits; and the per-request Context scoped to the key's account.

The job runner is this process's thread pool (`MEMBANK_JOBS=process`, the default) or
flow runs on a Prefect server (`MEMBANK_JOBS=prefect`: jobs outlive the process and every
API process sees them); nothing else lives only in one process (keys, revocation, the
registry and idempotent answers are in storage; the rate limits' buckets in a SQLite file
beside local storage, or per machine on object storage: `memory.api.rate_store`)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from memory import accounts
from memory.accounts import KeyStore
from memory.context import Context
from memory.errors import InvalidInput
from memory.ops.jobs import JobLimits, JobRunner, open_jobs
from memory.settings import Settings


@dataclass(frozen=True)
class ApiLimits:
    """Tuning of the API server (parameters, so tests pass small ones)."""

    max_body: int = 1_048_576
    """Largest request body, in bytes (an entry holds up to 256 kB of text)."""
    workers: int = 2
    """Threads running jobs (exports, compactions, test compactions)."""
    max_pending: int = 16
    """Jobs an account may have queued or running at once; more is a 429."""
    max_running: int | None = None
    """Jobs of one account running at once (None: half the job threads in process, 2 on
    Prefect); the others of the account wait their turn, another account's go first."""
    keep_jobs: int = 500
    """Finished jobs remembered (oldest forgotten first, their files deleted)."""
    page_limit: int = 100
    """Default page size of lists."""
    idempotency_hours: float = 24.0
    """How long the first answer to a request with an `Idempotency-Key` is kept."""
    job_retry_after: int = 5
    """Seconds a 429 for too many jobs asks the client to wait (`Retry-After`), when the
    pool gives no estimate of its own."""
    rate_limit: int = 0
    """Requests each API key may make per `rate_window` seconds (0: no limit)."""
    rate_window: int = 60
    """The window of `rate_limit`, in seconds."""

    @classmethod
    def from_settings(cls, settings: Settings) -> ApiLimits:
        """Return the defaults with the MEMBANK_API_* settings applied."""
        return cls(
            max_running=settings.jobs_running,
            job_retry_after=settings.api_job_retry_after,
            rate_limit=settings.api_rate_limit,
            rate_window=settings.api_rate_window,
        )

    @property
    def jobs(self) -> JobLimits:
        """Return the job pool's part of the limits."""
        return JobLimits(
            workers=self.workers,
            max_pending=self.max_pending,
            max_running=self.max_running,
            keep=self.keep_jobs,
        )


@dataclass
class ApiState:
    """The app's one store and pool; `context_for` makes each request's Context.

    Args:
        base: the context every request's is copied from (store, clock, embedder,
            completer, settings); its account is never used.
        keys: where API keys are looked up (default: the base context's store).
        jobs: the job runner (`open_runner`).
        limits: the server's limits.
        exports_dir: where finished export files wait to be downloaded.
    """

    base: Context
    keys: KeyStore
    jobs: JobRunner
    limits: ApiLimits
    exports_dir: Path

    @classmethod
    def open(
        cls,
        base: Context,
        *,
        exports_dir: Path,
        keys: KeyStore | None = None,
        limits: ApiLimits | None = None,
    ) -> ApiState:
        """Return the state of a server over `base`: its job pool (the one runner of REST and
        MCP), keys (default: the base context's store) and export folder; `close()` it."""
        chosen = limits or ApiLimits()
        return cls(
            base=base,
            keys=keys or cast(KeyStore, base.store),
            jobs=open_runner(base, chosen, exports_dir),
            limits=chosen,
            exports_dir=exports_dir,
        )

    def close(self) -> None:
        """Stop the job runner (in process: running jobs finish, queued ones are dropped;
        on Prefect the runs go on)."""
        self.jobs.shutdown()

    def context_for(self, account: str) -> Context:
        """Return a Context on the app's store scoped to `account` (no new connection)."""
        return dataclasses.replace(self.base, account=account)

    def __post_init__(self) -> None:
        self._resolver = accounts.KeyResolver(self.keys)

    def account_for(self, raw_key: str | None) -> str | None:
        """Return the account of an API key; None for a missing, unknown or revoked one."""
        return self._resolver.account(raw_key)

    def key_for(self, raw_key: str | None) -> accounts.ApiKey | None:
        """Return an API key's record (account, scopes, banks); None for a missing, unknown
        or revoked one."""
        return self._resolver.key(raw_key)


PREFECT_RUNNING = 2
"""Jobs of one account running at once on Prefect when MEMBANK_JOBS_RUNNING is unset."""


def open_runner(base: Context, limits: ApiLimits, exports_dir: Path) -> JobRunner:
    """Return the job runner `base.settings.jobs` names (see the module's docstring).

    Raises:
        InvalidInput: an unknown MEMBANK_JOBS, or `prefect` with no Prefect API named.
    """
    chosen = base.settings.jobs.strip().lower()
    if chosen == "process":
        return open_jobs(limits.jobs, base.clock)
    if chosen != "prefect":
        raise InvalidInput(f"MEMBANK_JOBS={base.settings.jobs!r}: use process or prefect")
    url = base.settings.jobs_url or os.environ.get("PREFECT_API_URL")
    if not url:
        raise InvalidInput(
            "MEMBANK_JOBS=prefect needs the Prefect API: set MEMBANK_JOBS_URL or "
            "PREFECT_API_URL (e.g. http://127.0.0.1:4200/api)"
        )
    from memory.ops.prefect_jobs import PrefectJobs  # httpx: only when jobs run on Prefect

    return PrefectJobs(
        url,
        data=base.store.location,
        exports_dir=exports_dir,
        max_pending=limits.max_pending,
        max_running=limits.max_running or PREFECT_RUNNING,
    )
