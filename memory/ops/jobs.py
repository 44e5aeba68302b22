"""Jobs: long work (exports, compactions, test compactions) run in a bounded thread pool.

The one job runner of every transport: the REST app and the MCP server each hold a `Jobs`
made by `open_jobs`, so an export started over MCP is downloaded over REST. A failed job
keeps its error (`JobRecord.failure`); a transport maps it as it maps the same error of a
direct call (REST: `memory.api.errors.status_of`), so no mapper is passed in here.

A job belongs to one account; another account asking for it gets the same 404 as for a job
that never existed. Fairness: at most `max_pending` jobs of an account wait or run at once
(more is TooManyJobs, whose `retry_after` says in how many seconds to try again: REST sends it
as `Retry-After`), and at most `max_running` of them run at once, so one account's burst
never holds every worker: queued jobs start account by account in turn. Finished jobs are
kept (newest `keep` of them) so their status and files can be fetched.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from memory.clock import SystemClock
from memory.errors import MembankError, NotFound
from memory.ports import Clock

JobStatus = Literal["queued", "running", "succeeded", "failed"]


class TooManyJobs(MembankError):
    """The account already has `max_pending` jobs queued or running (REST: a 429).

    Attributes:
        retry_after: whole seconds after which a retry may find room (REST: `Retry-After`),
            from how long the account's jobs have taken so far; None before any of them
            finished (the server's own `job_retry_after` answers then).
    """

    def __init__(self, message: str, *, retry_after: int | None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


RETRY_AFTER_MAX = 300


@dataclass
class JobRecord:
    """One job's state (the API shows it as `schemas.Job`)."""

    id: str
    account: str
    kind: str
    created_at: datetime
    status: JobStatus = "queued"
    started_at: datetime | None = None
    finished_at: datetime | None = None
    result: Any = None
    """What the work returned (a pydantic model or a list of them)."""
    failure: MembankError | None = None
    """The membank error a failed job raised (None when it failed unexpectedly)."""
    error: str | None = None
    """Why the job failed, as its caller is shown it."""
    file: Path | None = None
    """A file the job made for download (exports)."""
    details: dict[str, Any] = field(default_factory=dict)
    """What the request asked for, shown with the job (resource type and id, format)."""

    @property
    def done(self) -> bool:
        """Return True once the job succeeded or failed."""
        return self.status in ("succeeded", "failed")


@dataclass(frozen=True)
class JobLimits:
    """Tuning of the job pool (parameters, so tests pass small ones)."""

    workers: int = 2
    """Threads running jobs (exports, compactions, test compactions)."""
    max_pending: int = 16
    """Jobs an account may have queued or running at once; more is TooManyJobs."""
    max_running: int | None = None
    """Jobs of one account running at once (None: half the workers, at least 1), so one
    account cannot fill the pool while others wait."""
    keep: int = 500
    """Finished jobs remembered (oldest forgotten first, their files deleted)."""


class JobRunner(Protocol):
    """What runs jobs: this process's pool (`Jobs`, the offline default) or a job service
    (`memory.ops.prefect_jobs.PrefectJobs`: flow runs that outlive the API process)."""

    def submit(
        self,
        account: str,
        kind: str,
        work: Callable[[JobRecord], Any],
        details: dict[str, Any] | None = None,
        *,
        request: dict[str, Any] | None = None,
    ) -> JobRecord:
        """Start a job of `account`: `work` in this process, or `request` (the job's kind's
        request as JSON, see `memory.ops.job_kinds`) where the service runs it.

        Raises:
            TooManyJobs: the account has too many jobs queued or running.
        """
        ...

    def get(self, account: str, job_id: str) -> JobRecord:
        """Return the account's job; NotFound for no such job (or another account's)."""
        ...

    def wait(self, record: JobRecord, seconds: float) -> None:
        """Wait up to `seconds` for the job to finish (`record` then shows its state)."""
        ...

    def shutdown(self) -> None:
        """Stop taking jobs."""
        ...


class Jobs:
    """A bounded pool of worker threads and the records of their jobs.

    Args:
        workers: threads running jobs.
        max_pending: jobs one account may have queued or running.
        keep: finished jobs remembered; older ones are dropped with their files.
        clock: tells the times shown on jobs.
        max_running: jobs of one account running at once (None: half the workers, >= 1).
    """

    def __init__(
        self,
        *,
        workers: int,
        max_pending: int,
        keep: int,
        clock: Clock | None = None,
        max_running: int | None = None,
    ) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="membank-job")
        self._workers = workers
        self._max_pending = max_pending
        self._max_running = max(1, max_running if max_running is not None else workers // 2)
        self._keep = keep
        self._clock = clock or SystemClock()
        self._jobs: OrderedDict[str, JobRecord] = OrderedDict()
        self._futures: dict[str, Future[None]] = {}
        self._finished: dict[str, threading.Event] = {}
        self._queued: OrderedDict[str, deque[tuple[JobRecord, Callable[[JobRecord], Any]]]] = (
            OrderedDict()
        )
        """Jobs not yet started, per account (an account with none is not listed)."""
        self._served: dict[str, int] = {}
        """When each account last had a job started (a turn number): the next start goes to
        the account waiting longest."""
        self._turn = 0
        self._running: Counter[str] = Counter()
        self._took: dict[str, float] = {}
        """Seconds the account's last finished job took (for `retry_after`)."""
        self._closed = False
        self._lock = threading.Lock()

    def submit(
        self,
        account: str,
        kind: str,
        work: Callable[[JobRecord], Any],
        details: dict[str, Any] | None = None,
        *,
        request: dict[str, Any] | None = None,
    ) -> JobRecord:
        """Queue `work(record)` for `account`; its return value becomes the job's result
        (`request`, the same work as data for a job service, is not needed here).

        Raises:
            TooManyJobs: the account has `max_pending` jobs queued or running.
        """
        with self._lock:
            pending = sum(1 for j in self._jobs.values() if j.account == account and not j.done)
            if pending >= self._max_pending:
                raise TooManyJobs(
                    f"{pending} jobs of this account are queued or running: wait for one "
                    "to finish (poll its status_url), then retry",
                    retry_after=self._retry_after(account, pending),
                )
            record = JobRecord(
                id=uuid.uuid4().hex,
                account=account,
                kind=kind,
                created_at=self._clock.now(),
                details=dict(details or {}),
            )
            self._jobs[record.id] = record
            self._finished[record.id] = threading.Event()
            self._queued.setdefault(account, deque()).append((record, work))
            self._forget_old()
            self._dispatch()
        return record

    def _retry_after(self, account: str, pending: int) -> int | None:
        """Seconds until one of the account's `pending` jobs is likely to have finished
        (None: none has finished yet, so there is nothing to go by)."""
        took = self._took.get(account)
        if took is None:
            return None
        waves = max(1, -(-(pending - self._max_running + 1) // self._max_running))
        return int(min(max(1.0, took * waves), RETRY_AFTER_MAX))

    def _dispatch(self) -> None:
        """Start queued jobs while workers are free, account by account in turn, never
        more than `max_running` of one account (called under `_lock`)."""
        while not self._closed and sum(self._running.values()) < self._workers:
            ready = [a for a, q in self._queued.items() if self._running[a] < self._max_running]
            if not ready:
                return
            chosen = min(ready, key=lambda a: self._served.get(a, -1))  # longest unserved
            record, work = self._queued[chosen].popleft()
            if not self._queued[chosen]:
                del self._queued[chosen]
            self._turn += 1
            self._served[chosen] = self._turn
            self._running[chosen] += 1
            self._futures[record.id] = self._pool.submit(self._run, record, work)

    def _run(self, record: JobRecord, work: Callable[[JobRecord], Any]) -> None:
        record.status = "running"
        record.started_at = self._clock.now()
        began = time.monotonic()
        try:
            record.result = work(record)
            record.status = "succeeded"
        except MembankError as exc:
            record.failure = exc
            record.error = str(exc)
            record.status = "failed"
        except Exception as exc:  # a job's unexpected failure is its own, not the server's
            record.error = f"the job failed unexpectedly ({type(exc).__name__})"
            record.status = "failed"
        finally:
            record.finished_at = self._clock.now()
            with self._lock:
                self._futures.pop(record.id, None)
                self._running[record.account] -= 1
                self._took[record.account] = time.monotonic() - began
                self._dispatch()
                finished = self._finished.get(record.id)
            if finished is not None:
                finished.set()

    def get(self, account: str, job_id: str) -> JobRecord:
        """Return the account's job `job_id`; NotFound for no such job (or another account's)."""
        with self._lock:
            record = self._jobs.get(job_id)
        if record is None or record.account != account:
            raise NotFound(f"no job {job_id!r}")
        return record

    def wait(self, record: JobRecord, seconds: float) -> None:
        """Wait up to `seconds` for the job to finish."""
        finished = self._finished.get(record.id)
        if finished is None or seconds <= 0:
            return
        finished.wait(timeout=seconds)

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.done]
        for old in finished[: max(len(finished) - self._keep, 0)]:
            self._jobs.pop(old.id, None)
            self._finished.pop(old.id, None)
            if old.file is not None:
                old.file.unlink(missing_ok=True)

    def shutdown(self) -> None:
        """Stop taking jobs; let running ones finish, drop queued ones."""
        with self._lock:
            self._closed = True
            self._queued.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)


def open_jobs(limits: JobLimits | None = None, clock: Clock | None = None) -> Jobs:
    """Return a job pool with `limits` (the default ones if None); `shutdown()` it when done."""
    chosen = limits or JobLimits()
    return Jobs(
        workers=chosen.workers,
        max_pending=chosen.max_pending,
        keep=chosen.keep,
        clock=clock,
        max_running=chosen.max_running,
    )
