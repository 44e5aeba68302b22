"""Session-summary merging (deployments `membank-session-merge/merge` and
`membank-session-merge-batch/merge-batch`): one retried task over
`memory.ops.agents.merge_conversation`, and the triggers that start the deployments.

`end_conversation(..., trigger=deployment_trigger())` returns as soon as the run is
scheduled (`run_deployment(..., timeout=0)`); a worker runs the merge off the user's path.
A flow run costs about a second of orchestration around a merge of a few tenths, so
conversations that end together are better merged in one run: `batching_trigger()`
collects the merges asked for together (until `quiet` seconds pass with none, at most
`window` seconds) and schedules one run of the batch deployment for all of them (each merge
in exactly one batch), which splits them into at most `BATCH_THREADS` shares, one task each
(a task costs a few tenths of a second of orchestration too); every merge of one user is
in the same share, in the order asked. Retrying is safe: a summary records the ids of the
messages it covers, so a retried or repeated merge adds nothing twice.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from prefect import flow, task, unmapped
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner
from pydantic import BaseModel

from flows.compaction_sweep import LLM_TAG
from flows.retry import PERMANENT, RETRIED_BELOW, transient
from memory.ops import agents
from memory.ops.agents import (
    DEFAULT_SUMMARY_TOKENS,
    SessionMergeRequest,
    SessionMergeTrigger,
    SessionSummary,
)
from memory.wiring import open_context

FLOW_NAME = "membank-session-merge"
DEPLOYMENT = f"{FLOW_NAME}/merge"
"""The deployment in prefect.yaml that `deployment_trigger` starts."""
BATCH_FLOW_NAME = "membank-session-merge-batch"
BATCH_DEPLOYMENT = f"{BATCH_FLOW_NAME}/merge-batch"
"""The deployment in prefect.yaml that `batching_trigger` starts."""
BATCH_THREADS = 4
"""Merges of one batch run at once (merges of one user still take turns)."""
BATCH_WINDOW_SECONDS = 0.5
"""Longest `batching_trigger` collects merges after the first of a batch."""
BATCH_QUIET_SECONDS = 0.1
"""A batch is scheduled once no merge was asked for this long (a burst has ended)."""


MERGE_TASK: dict[str, Any] = {
    "retries": 2,
    "retry_delay_seconds": 5,
    "tags": ["membank", "session", LLM_TAG],
    "cache_policy": NO_CACHE,
    "retry_condition_fn": transient,
}
"""The options of both merge tasks (one conversation; a batch's share)."""


class MergeItem(BaseModel):
    """One merge of a batch: an ended conversation of a user x agent."""

    user: str
    agent: str
    conversation: str
    max_tokens: int = DEFAULT_SUMMARY_TOKENS


@task(**MERGE_TASK, task_run_name="merge {conversation} into {user} x {agent}")
def merge_task(
    user: str,
    agent: str,
    conversation: str,
    max_tokens: int = DEFAULT_SUMMARY_TOKENS,
    data: str | None = None,
    account: str | None = None,
) -> SessionSummary | None:
    """Merge one ended conversation into its user x agent summary; returns the summary."""
    ctx = open_context(data, account=account)
    request = SessionMergeRequest(
        account=ctx.account,
        user=user,
        agent=agent,
        conversation=conversation,
        max_tokens=max_tokens,
    )
    return agents.merge_conversation(ctx, request)


@flow(name=FLOW_NAME, log_prints=True)
def session_merge_flow(
    user: str,
    agent: str,
    conversation: str,
    max_tokens: int = DEFAULT_SUMMARY_TOKENS,
    data: str | None = None,
    account: str | None = None,
) -> SessionSummary | None:
    """Merge an ended conversation into the rolling summary of its user x agent."""
    summary = merge_task(user, agent, conversation, max_tokens, data=data, account=account)
    if summary is not None:
        merged = len(summary.conversations)
        print(f"{user} x {agent}: summary v{summary.version}, {merged} conversations merged")
    return summary


@task(**MERGE_TASK, task_run_name="merge {merges[0].conversation} and the rest of its share")
def merge_share_task(
    merges: list[MergeItem], data: str | None = None, account: str | None = None
) -> list[str | None]:
    """Merge a share of a batch, one conversation after another; returns, per merge, None
    when it merged or what failed. A storage failure is raised (after the others ran) so
    Prefect retries the share: a merge done already is found merged and left unchanged."""
    ctx = open_context(data, account=account)
    outcome: list[str | None] = []
    transient_failure: Exception | None = None
    for m in merges:
        request = SessionMergeRequest(
            account=ctx.account,
            user=m.user,
            agent=m.agent,
            conversation=m.conversation,
            max_tokens=m.max_tokens,
        )
        try:
            agents.merge_conversation(ctx, request)
            outcome.append(None)
        except Exception as exc:  # the others of the share go on
            outcome.append(f"{m.user} x {m.agent} / {m.conversation}: {exc}")
            if not isinstance(exc, (*PERMANENT, *RETRIED_BELOW)):
                transient_failure = exc
    if transient_failure is not None:
        raise transient_failure
    return outcome


def shares(merges: list[MergeItem], count: int) -> list[list[MergeItem]]:
    """Split `merges` into at most `count` shares of about equal size, every merge of one
    user in the same share and in the order asked (a user's merges take turns anyway)."""
    by_user: dict[str, list[MergeItem]] = {}
    for m in merges:
        by_user.setdefault(m.user, []).append(m)
    split: list[list[MergeItem]] = [[] for _ in range(max(1, min(count, len(by_user))))]
    for group in sorted(by_user.values(), key=len, reverse=True):
        min(split, key=len).extend(group)
    return [share for share in split if share]


@flow(
    name=BATCH_FLOW_NAME,
    log_prints=True,
    task_runner=ThreadPoolTaskRunner(max_workers=BATCH_THREADS),  # type: ignore[arg-type]
)
def session_merge_batch_flow(
    merges: list[MergeItem], data: str | None = None, account: str | None = None
) -> int:
    """Merge several ended conversations in one flow run: `BATCH_THREADS` tasks at most, each
    merging its share of the batch in turn (orchestration paid per share, not per
    conversation); a failed merge does not stop the others. Returns how many merged."""
    futures = merge_share_task.map(
        shares(merges, BATCH_THREADS), data=unmapped(data), account=unmapped(account)
    )
    failures: list[str] = []
    for future in futures:
        future.wait()
        if future.state.is_completed():
            failures += [f for f in future.result() if f is not None]
        else:
            failures.append(f"a share failed: {future.state.message}")
    for failure in failures:
        print(f"not merged: {failure}")
    merged = len(merges) - len(failures)
    print(f"{merged} of {len(merges)} conversations merged, {len(failures)} failed")
    if failures:
        raise RuntimeError(
            f"{len(failures)} of {len(merges)} merges failed (retried next time asked)"
        )
    return merged


def deployment_trigger(data: str | None = None) -> SessionMergeTrigger:
    """Return a trigger that schedules the `membank-session-merge/merge` deployment and
    returns at once (PREFECT_API_URL names the server; a worker runs the merge)."""

    def trigger(request: SessionMergeRequest) -> None:
        from prefect.deployments import run_deployment

        parameters = {
            "user": request.user,
            "agent": request.agent,
            "conversation": request.conversation,
            "data": data,
            "account": request.account,
        }
        run_deployment(DEPLOYMENT, parameters=parameters, timeout=0)

    return trigger


def flow_trigger(data: str | None = None) -> SessionMergeTrigger:
    """Return a trigger that runs the flow in this process and waits (the demo, the bench;
    no worker needed)."""

    def trigger(request: SessionMergeRequest) -> None:
        session_merge_flow(
            request.user, request.agent, request.conversation, data=data, account=request.account
        )

    return trigger


class _Batcher:
    """Collects merge requests and schedules one batch run per account: `quiet` seconds
    after the last request of a burst, or `window` seconds after its first, if sooner."""

    def __init__(
        self, data: str | None, window: float, schedule: Any, quiet: float = BATCH_QUIET_SECONDS
    ) -> None:
        self._data = data
        self._window = window
        self._quiet = quiet
        self._schedule = schedule
        self._pending: dict[str, dict[tuple[str, str, str], MergeItem]] = {}
        self._first_at = self._last_at = 0.0
        self._waiter: threading.Thread | None = None
        self._guard = threading.Condition()

    def __call__(self, request: SessionMergeRequest) -> None:
        item = MergeItem(
            user=request.user,
            agent=request.agent,
            conversation=request.conversation,
            max_tokens=request.max_tokens,
        )
        with self._guard:
            self._last_at = time.monotonic()
            if self._waiter is None:
                self._first_at = self._last_at
                self._waiter = threading.Thread(target=self._wait, name="merge-batch", daemon=True)
                self._waiter.start()
            batch = self._pending.setdefault(request.account, {})
            batch[(item.user, item.agent, item.conversation)] = item  # asked twice: once

    def _wait(self) -> None:
        """Flush when the batch is due, unless it was flushed by hand meanwhile."""
        with self._guard:
            while self._waiter is threading.current_thread():
                due = min(self._first_at + self._window, self._last_at + self._quiet)
                left = due - time.monotonic()
                if left <= 0:
                    break
                self._guard.wait(left)
            else:
                return
        self.flush()

    def flush(self) -> None:
        """Schedule what was collected now (each request in exactly one batch)."""
        with self._guard:
            pending, self._pending = self._pending, {}
            self._waiter = None
            self._guard.notify_all()
        for account, items in pending.items():
            self._schedule(list(items.values()), self._data, account)


def _run_batch_deployment(items: list[MergeItem], data: str | None, account: str) -> None:
    from prefect.deployments import run_deployment

    parameters = {"merges": [i.model_dump() for i in items], "data": data, "account": account}
    run_deployment(BATCH_DEPLOYMENT, parameters=parameters, timeout=0)


def batching_trigger(
    data: str | None = None,
    *,
    window: float = BATCH_WINDOW_SECONDS,
    quiet: float = BATCH_QUIET_SECONDS,
) -> _Batcher:
    """Return a trigger that collects the merges asked for together (until `quiet` seconds
    pass with none, at most `window` seconds after the first) and schedules one run of the
    `membank-session-merge-batch/merge-batch` deployment per account for them; returns at
    once. `flush()` schedules what is collected now: call it
    before the process exits, or a batch still collecting is lost with the process (its
    conversations stay in working memory, unmerged, until merged again)."""
    return _Batcher(data, window, _run_batch_deployment, quiet)
