"""Jobs: long work (exports, compactions, test compactions) run in a bounded thread pool.

The one job runner of every transport: the REST app and the MCP server each hold a `Jobs`
made by `open_jobs`, so an export started over MCP is downloaded over REST. A failed job
keeps its error (`JobRecord.failure`); a transport maps it as it maps the same error of a
direct call (REST: `memory.api.errors.status_of`), so no mapper is passed in here.

A job belongs to one account; another account asking for it gets the same 404 as for a job
that never existed. At most `max_pending` jobs of an account wait or run at once. Finished
jobs are kept (newest `keep` of them) so their status and files can be fetched.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memory.clock import SystemClock
from memory.errors import MembankError, NotFound
from memory.ports import Clock

JobStatus = Literal["queued", "running", "succeeded", "failed"]


class TooManyJobs(MembankError):
    """The account already has `max_pending` jobs queued or running (REST: a 429)."""


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
    keep: int = 500
    """Finished jobs remembered (oldest forgotten first, their files deleted)."""


class Jobs:
    """A bounded pool of worker threads and the records of their jobs.

    Args:
        workers: threads running jobs.
        max_pending: jobs one account may have queued or running.
        keep: finished jobs remembered; older ones are dropped with their files.
        clock: tells the times shown on jobs.
    """

    def __init__(
        self,
        *,
        workers: int,
        max_pending: int,
        keep: int,
        clock: Clock | None = None,
    ) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="membank-job")
        self._max_pending = max_pending
        self._keep = keep
        self._clock = clock or SystemClock()
        self._jobs: OrderedDict[str, JobRecord] = OrderedDict()
        self._futures: dict[str, Future[None]] = {}
        self._lock = threading.Lock()

    def submit(
        self,
        account: str,
        kind: str,
        work: Callable[[JobRecord], Any],
        details: dict[str, Any] | None = None,
    ) -> JobRecord:
        """Queue `work(record)` for `account`; its return value becomes the job's result.

        Raises:
            TooManyJobs: the account has `max_pending` jobs queued or running.
        """
        with self._lock:
            pending = sum(1 for j in self._jobs.values() if j.account == account and not j.done)
            if pending >= self._max_pending:
                raise TooManyJobs(
                    f"{pending} jobs of this account are queued or running: wait for one "
                    "to finish (poll its status_url), then retry"
                )
            record = JobRecord(
                id=uuid.uuid4().hex,
                account=account,
                kind=kind,
                created_at=self._clock.now(),
                details=dict(details or {}),
            )
            self._jobs[record.id] = record
            self._forget_old()
        self._futures[record.id] = self._pool.submit(self._run, record, work)
        return record

    def _run(self, record: JobRecord, work: Callable[[JobRecord], Any]) -> None:
        record.status = "running"
        record.started_at = self._clock.now()
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
            self._futures.pop(record.id, None)

    def get(self, account: str, job_id: str) -> JobRecord:
        """Return the account's job `job_id`; NotFound for no such job (or another account's)."""
        with self._lock:
            record = self._jobs.get(job_id)
        if record is None or record.account != account:
            raise NotFound(f"no job {job_id!r}")
        return record

    def wait(self, record: JobRecord, seconds: float) -> None:
        """Wait up to `seconds` for the job to finish."""
        future = self._futures.get(record.id)
        if future is None or seconds <= 0:
            return
        with contextlib.suppress(TimeoutError):
            future.result(timeout=seconds)

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.done]
        for old in finished[: max(len(finished) - self._keep, 0)]:
            self._jobs.pop(old.id, None)
            if old.file is not None:
                old.file.unlink(missing_ok=True)

    def shutdown(self) -> None:
        """Stop taking jobs; let running ones finish, drop queued ones."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def open_jobs(limits: JobLimits | None = None, clock: Clock | None = None) -> Jobs:
    """Return a job pool with `limits` (the default ones if None); `shutdown()` it when done."""
    chosen = limits or JobLimits()
    return Jobs(
        workers=chosen.workers, max_pending=chosen.max_pending, keep=chosen.keep, clock=clock
    )
