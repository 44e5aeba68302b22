"""Durable jobs: the API's long work as flow runs of the `membank-job` deployments.

With `MEMBANK_JOBS=prefect` (and `MEMBANK_JOBS_URL` or `PREFECT_API_URL` naming the Prefect
API) a job is a flow run of `membank-job/<kind>` (prefect.yaml; `memory.ops.job_kinds` says
what each kind's request is), and its id is the flow run's id. Status comes from the flow
run's state and the result from the `membank-job` artifact the run stores on the Prefect
server (`flows/jobs.py`), so every API process, and one restarted, reads the same jobs, and
the runs show in the Prefect UI. A worker of the deployments' pool runs them.

Fairness: at most `max_pending` flow runs of an account are scheduled or running (counted on
the server by the account's tag; two requests at the same instant may both pass at the
last free place); more is `TooManyJobs` (REST: a 429 with `Retry-After`). At most
`max_running` of them run at once, whatever workers poll the pool: an account's runs go to
a work queue of its own in the deployment's work pool (`queue_name`, made on first use with
that concurrency limit), and the server hands workers no more of a queue's runs than its
limit, so the other runs of a busy account wait on the server, not in a worker, while other
accounts' runs are picked up. How many run at once across accounts is the work pool's
concurrency.

httpx only, like `memory.leases.prefect`: the API process never imports Prefect.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from pydantic import TypeAdapter

from memory import errors
from memory.errors import MembankError, NotFound, StorageError
from memory.leases.prefect import auth_headers
from memory.ops.job_kinds import KINDS, typed_result
from memory.ops.jobs import JobRecord, JobStatus, TooManyJobs

FLOW = "membank-job"
"""The flow whose deployments (one per kind, named after it) run the jobs."""
ARTIFACT_TYPE = "membank-job"
"""The type of the artifact a job's flow run stores its result or error in."""
ACCOUNT_TAG = "membank-account:"
STATUS: dict[str, JobStatus] = {
    "SCHEDULED": "queued",
    "PENDING": "queued",
    "PAUSED": "queued",
    "RUNNING": "running",
    "CANCELLING": "running",
    "COMPLETED": "succeeded",
    "FAILED": "failed",
    "CRASHED": "failed",
    "CANCELLED": "failed",
}
POLL_SECONDS = 0.25
"""How often `wait` asks the server about a job."""
_when = TypeAdapter(datetime)


class PrefectJobs:
    """Jobs as flow runs on the Prefect API at `api_url`.

    Args:
        api_url: the Prefect API (PREFECT_API_URL's form, .../api).
        data: the storage URI the flow runs open (the API's own).
        exports_dir: where export runs write their files (a folder every API process and
            worker sees).
        max_pending: flow runs one account may have scheduled or running.
        max_running: flow runs of one account running at once (its work queue's limit).
    """

    def __init__(
        self, api_url: str, *, data: str, exports_dir: Path, max_pending: int, max_running: int = 2
    ) -> None:
        self.where = api_url.rstrip("/")
        self._data = data
        self._exports_dir = exports_dir
        self._max_pending = max_pending
        self._max_running = max_running
        self._client = httpx.Client(base_url=self.where + "/", timeout=30.0, headers=auth_headers())
        self._deployments: dict[str, tuple[str, str]] = {}
        """Per kind: the deployment's id and its work pool."""
        self._queues: set[tuple[str, str]] = set()
        """(pool, queue) made or found already."""
        self._done: dict[str, JobRecord] = {}
        """Finished jobs already read (their state no longer changes)."""

    def submit(
        self,
        account: str,
        kind: str,
        work: Callable[[JobRecord], Any],
        details: dict[str, Any] | None = None,
        *,
        request: dict[str, Any] | None = None,
    ) -> JobRecord:
        """Start a flow run of `membank-job/<kind>` for `account` with `request`.

        Raises:
            TooManyJobs: the account has `max_pending` runs scheduled or running.
            StorageError: the Prefect API cannot be reached, or has no such deployment.
        """
        if request is None or kind not in KINDS:
            raise StorageError(f"job kind {kind!r} cannot run as a flow run")
        tag = ACCOUNT_TAG + account
        pending = self._pending(tag)
        if pending >= self._max_pending:
            raise TooManyJobs(
                f"{pending} jobs of this account are queued or running: wait for one to "
                "finish (poll its status_url), then retry",
                retry_after=None,
            )
        parameters = {
            "kind": kind,
            "account": account,
            "request": request,
            "data": self._data,
            "exports_dir": str(self._exports_dir),
            "details": dict(details or {}),
        }
        deployment, pool = self._deployment(kind)
        body = {
            "parameters": parameters,
            "tags": ["membank", FLOW, tag],
            "work_queue_name": self._queue(pool, account),
        }
        run = self._call("POST", f"deployments/{deployment}/create_flow_run", body)
        return self._record(run, account)

    def get(self, account: str, job_id: str) -> JobRecord:
        """Return the account's job `job_id` as its flow run stands now.

        Raises:
            NotFound: no such flow run, one that is no job, or another account's.
        """
        done = self._done.get(job_id)
        if done is not None:
            if done.account != account:
                raise NotFound(f"no job {job_id!r}")
            return done
        reply = self._send("GET", f"flow_runs/{job_id}", None)
        if reply.status_code in (404, 422):
            raise NotFound(f"no job {job_id!r}")
        run = self._checked(reply, "read the job")
        if FLOW not in (run.get("tags") or []) or run["parameters"].get("account") != account:
            raise NotFound(f"no job {job_id!r}")
        return self._record(run, account)

    def wait(self, record: JobRecord, seconds: float) -> None:
        """Ask the server every POLL_SECONDS, for up to `seconds`, until the job finished;
        `record` then shows what the server last said."""
        deadline = time.monotonic() + seconds
        while not record.done and time.monotonic() < deadline:
            time.sleep(min(POLL_SECONDS, max(deadline - time.monotonic(), 0)))
            fresh = self.get(record.account, record.id)
            for field in dataclasses.fields(JobRecord):
                setattr(record, field.name, getattr(fresh, field.name))

    def shutdown(self) -> None:
        """Close the connection (the runs go on on the server)."""
        self._client.close()

    def _pending(self, tag: str) -> int:
        waiting = [state for state, status in STATUS.items() if status in ("queued", "running")]
        body = {"flow_runs": {"tags": {"all_": [tag]}, "state": {"type": {"any_": waiting}}}}
        return int(self._call("POST", "flow_runs/count", body))

    def _deployment(self, kind: str) -> tuple[str, str]:
        """Return the id and work pool of the kind's deployment."""
        found = self._deployments.get(kind)
        if found is None:
            reply = self._send("GET", f"deployments/name/{FLOW}/{kind}", None)
            if reply.status_code == 404:
                raise StorageError(
                    f"the Prefect API at {self.where} has no deployment {FLOW}/{kind}: deploy "
                    "prefect.yaml (python -m flows.serve_setup), or unset MEMBANK_JOBS"
                )
            deployment = self._checked(reply, "find the deployment")
            pool = deployment.get("work_pool_name")
            if not pool:
                raise StorageError(
                    f"the deployment {FLOW}/{kind} has no work pool: deploy prefect.yaml "
                    "(python -m flows.serve_setup)"
                )
            found = (str(deployment["id"]), str(pool))
            self._deployments[kind] = found
        return found

    def _queue(self, pool: str, account: str) -> str:
        """Return the account's work queue in `pool`, made with the account's limit of
        running jobs if it does not exist (a queue made earlier keeps its limit)."""
        name = queue_name(account)
        if (pool, name) not in self._queues:
            body = {
                "name": name,
                "concurrency_limit": self._max_running,
                "description": "membank jobs of one account (see memory.ops.prefect_jobs)",
            }
            reply = self._send("POST", f"work_pools/{pool}/queues", body)
            if reply.status_code != 409:  # 409: it exists already
                self._checked(reply, "make the account's work queue")
            self._queues.add((pool, name))
        return name

    def _record(self, run: dict[str, Any], account: str) -> JobRecord:
        parameters = run.get("parameters") or {}
        state = run.get("state") or {}
        status = STATUS.get(str(state.get("type")), "queued")
        kind = str(parameters.get("kind"))
        record = JobRecord(
            id=str(run["id"]),
            account=account,
            kind=kind,
            created_at=_when.validate_python(run["created"]),
            status=status,
            started_at=_time(run.get("start_time")),
            finished_at=_time(run.get("end_time")) if status in ("succeeded", "failed") else None,
            details=dict(parameters.get("details") or {}),
        )
        if record.done:
            self._finish(record, str(state.get("type")))
            self._done[record.id] = record
        return record

    def _finish(self, record: JobRecord, state: str) -> None:
        """Fill in a finished job's result or error from its run's artifact."""
        body = {
            "artifacts": {"flow_run_id": {"any_": [record.id]}, "type": {"any_": [ARTIFACT_TYPE]}},
            "limit": 1,
        }
        found = self._call("POST", "artifacts/filter", body)
        data: dict[str, Any] = (found[0].get("data") if found else None) or {}
        failed = data.get("error")
        if record.status == "succeeded" and "result" in data:
            record.result = typed_result(record.kind, data["result"])
            record.file = Path(data["file"]) if data.get("file") else None
        elif isinstance(failed, dict):
            record.status = "failed"
            record.failure = error_of(str(failed.get("type")), str(failed.get("message")))
            record.error = str(failed.get("message"))
        else:
            record.status = "failed"
            record.error = f"the job failed unexpectedly ({state.lower()})"

    def _call(self, method: str, path: str, body: Any) -> Any:
        return self._checked(self._send(method, path, body), "run the job")

    def _send(self, method: str, path: str, body: Any) -> httpx.Response:
        try:
            return self._client.request(method, path, json=body)
        except httpx.TransportError as exc:
            raise StorageError(
                f"the job service at {self.where} cannot be reached ({exc}): start the "
                "Prefect server, or unset MEMBANK_JOBS"
            ) from exc

    def _checked(self, reply: httpx.Response, what: str) -> Any:
        if reply.status_code >= 300:
            raise StorageError(
                f"the job service at {self.where} refused to {what}: HTTP "
                f"{reply.status_code} {reply.text[:200]}"
            )
        return reply.json()


QUEUE_PREFIX = "membank-jobs-"


def queue_name(account: str) -> str:
    """Return the name of `account`'s work queue (a digest: an account id may hold
    characters a queue's name may not)."""
    return QUEUE_PREFIX + hashlib.sha256(account.encode()).hexdigest()[:16]


def error_of(name: str, message: str) -> MembankError:
    """Return the membank error a run reported by its class name (the same REST code as
    the error raised in process); MembankError for a name not known here."""
    found = getattr(errors, name, None)
    if isinstance(found, type) and issubclass(found, MembankError):
        try:
            return found(message)
        except TypeError:
            pass
    return MembankError(message)


def _time(value: Any) -> datetime | None:
    return None if value is None else _when.validate_python(value)
