"""Session-summary merging (deployment `membank-session-merge/merge`): one retried task over
`memory.ops.agents.merge_conversation`, and the trigger that starts the deployment.

`end_conversation(..., trigger=deployment_trigger())` returns as soon as the run is
scheduled (`run_deployment(..., timeout=0)`); a worker runs the merge off the user's path.
Retrying is safe: a summary records the ids of the messages it covers, so a retried or
repeated merge adds nothing twice.
"""

from __future__ import annotations

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows.compaction_sweep import LLM_TAG
from flows.retry import transient
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


@task(
    retries=2,
    retry_delay_seconds=5,
    tags=["membank", "session", LLM_TAG],
    cache_policy=NO_CACHE,
    retry_condition_fn=transient,
    task_run_name="merge {conversation} into {user} x {agent}",
)
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
