"""Prefect tasks over `memory.ops`, made one way (`bank_task`), the tables they publish and
the progress artifact of a long sweep (`Progress`).

Which layer retries what (one decision, for every flow):
- the LLM provider retries a transient model error (timeout, connection, 429, 5xx) itself;
- the store retries a commit race with another process itself (both: `memory/providers`,
  `memory/store`);
- a Prefect task never retries an LLM call again: a task that calls an LLM (`calls_llm`,
  e.g. a partition's summary) has no task retries, so one sweep makes at most the provider's
  attempts per partition; what still fails is reported and the next sweep tries again;
- any other task retries, after a longer wait, only what no lower layer retried and a rerun
  can fix: a storage or disk failure. A caller's mistake (a missing bank, a bad path) and a
  provider error (already retried) fail the task at once (`flows.retry.transient`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar
from uuid import UUID

from prefect import Task, task
from prefect.artifacts import (
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)
from prefect.cache_policies import NO_CACHE

from flows.retry import transient
from memory.context import Context
from memory.wiring import open_context

Req = TypeVar("Req")
Res = TypeVar("Res")

BankTask = Task[[str | None, str | None, Req], Res]
"""A task called as `(data, account, request)`: the storage, the account acted for, the
typed `memory.ops` request."""

RETRIES = 2
"""Task retries of a task that calls no LLM (storage and disk failures only)."""
RETRY_DELAY_SECONDS = 10


def bank_task(
    *,
    name: str,
    run_name: str,
    tags: Iterable[str] = (),
    calls_llm: bool = False,
    retries: int = RETRIES,
    retry_delay_seconds: float | list[float] = RETRY_DELAY_SECONDS,
) -> Callable[[Callable[[Context, Req], Res]], BankTask[Req, Res]]:
    """Make a Prefect task of `work(ctx, request)`, one `memory.ops` call.

    The task takes `(data, account, request)` (paths and ids, not connections), opens the
    context on `data` acting for `account` and runs `work`. No result cache (every run acts
    on the bank as it is now); the retries follow the module's rule: none when the work
    `calls_llm`, else `retries` on transient failures only.

    Args:
        name: the task's name in Prefect.
        run_name: each run's name, formatted from the parameters (`{request.key}`).
        tags: Prefect tags (an `llm` tag shares a concurrency limit).
        calls_llm: the work calls an LLM, which its provider already retries.
        retries: task retries of other work.
        retry_delay_seconds: the wait before each retry.
    """

    def make(work: Callable[[Context, Req], Res]) -> BankTask[Req, Res]:
        def run(data: str | None, account: str | None, request: Req) -> Res:
            return work(open_context(data, account=account), request)

        run.__name__ = work.__name__
        run.__qualname__ = work.__qualname__
        run.__module__ = work.__module__
        run.__doc__ = work.__doc__
        made: BankTask[Req, Res] = task(
            name=name,
            task_run_name=run_name,
            tags=list(tags),
            retries=0 if calls_llm else retries,
            retry_delay_seconds=retry_delay_seconds,
            retry_condition_fn=transient,
            cache_policy=NO_CACHE,
        )(run)
        return made

    return make


def attempt() -> tuple[str | None, int]:
    """Return the id of the task run calling this and how many more times Prefect will retry
    it if it fails: (None, 0) outside a task run. A task retried runs again in the same
    process, with the same id."""
    from prefect.context import TaskRunContext

    run = TaskRunContext.get()
    if run is None:
        return None, 0
    return str(run.task_run.id), max(0, run.task.retries - (run.task_run.run_count - 1))


def publish_table(
    key: str, rows: Sequence[Mapping[str, Any]], description: str, notes: Iterable[str] = ()
) -> None:
    """Publish `rows` (one dict per table row, the same columns each) as the table artifact
    `key`; `notes` (markdown lines) follow the description."""
    text = "\n\n".join([description, *notes])
    create_table_artifact(table=[dict(row) for row in rows], key=key, description=text)


class Progress:
    """A flow run's progress artifact `key`: made at 0 %, moved as steps finish, 100 % at the
    end (`finish`). It never moves back: when a step reveals more work (a bank's check finds
    partitions to compact), the share done is sent only once it passes the last one sent."""

    def __init__(self, key: str, description: str) -> None:
        self.description = description
        self.percent = 0.0
        made = create_progress_artifact(0.0, key=key, description=description)
        assert isinstance(made, UUID)  # called in a flow's own (sync) code
        self.artifact_id = made

    def update(self, done: int, total: int, note: str) -> None:
        """Report `done` of `total` steps (`note`: what they are, e.g. "3 of 7 banks")."""
        percent = round(100.0 * done / total, 1) if total else 100.0
        if percent > self.percent:
            self.percent = percent
            update_progress_artifact(
                self.artifact_id, percent, description=f"{self.description}: {note}"
            )

    def finish(self, note: str) -> None:
        """Report the run done: 100 %, with `note` saying what it did."""
        self.percent = 100.0
        update_progress_artifact(self.artifact_id, 100.0, description=f"{self.description}: {note}")


def table_lines(data: str) -> list[str]:
    """Return a published table (an artifact's JSON data) as markdown table lines."""
    rows: list[dict[str, Any]] = json.loads(data)
    if not rows:
        return []
    columns = list(rows[0])
    lines = [_cells(columns), _cells(["---"] * len(columns))]
    lines += [_cells([str(row.get(c, "")) for c in columns]) for row in rows]
    return lines


def _cells(values: Sequence[str]) -> str:
    return "| " + " | ".join(values) + " |"
