"""Per-account fairness of durable jobs (issue 20: one account cannot fill the pool): each
account's `membank-job` runs go to a work queue of its own with a limit of running jobs, so
the server hands workers at most that many of a busy account's runs and another account's
run alongside. Checked against the test server by asking it what a worker polling the pool
would get (`get_scheduled_flow_runs`), with no worker started."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import httpx

from memory.api.state import ApiLimits
from memory.ops.prefect_jobs import PrefectJobs, queue_name
from memory.settings import Settings

POOL = "membank-fairness-test"


def _api() -> str:
    from prefect.settings import get_current_settings

    return str(get_current_settings().api.url)


def _deploy() -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectAlreadyExists

    from flows.jobs import job_flow

    with get_client(sync_client=True) as client, contextlib.suppress(ObjectAlreadyExists):
        client.create_work_pool(WorkPoolCreate(name=POOL, type="process"))
    job_flow.to_deployment(name="export", work_pool_name=POOL).apply()


def test_a_busy_account_gets_its_limit_of_workers_and_another_account_its_turn(
    prefect_api: None, tmp_path: Path
) -> None:
    _deploy()
    api = _api()
    jobs = PrefectJobs(
        api, data=str(tmp_path / "db"), exports_dir=tmp_path, max_pending=16, max_running=2
    )
    request: dict[str, Any] = {"bank": "notes", "format": "json"}
    try:
        acme = [jobs.submit("acme", "export", lambda _: None, request=request) for _ in range(4)]
        beta = jobs.submit("beta/β", "export", lambda _: None, request=request)
    finally:
        jobs.shutdown()

    with httpx.Client(base_url=api + "/") as http:
        queues = {
            q["name"]: q for q in http.post(f"work_pools/{POOL}/queues/filter", json={}).json()
        }
        handed = http.post(f"work_pools/{POOL}/get_scheduled_flow_runs", json={"limit": 10})
    assert queues[queue_name("acme")]["concurrency_limit"] == 2
    assert queues[queue_name("beta/β")]["concurrency_limit"] == 2
    runs = {r["flow_run"]["id"] for r in handed.json()}
    assert len(runs & {j.id for j in acme}) == 2  # acme's other two wait on the server
    assert beta.id in runs  # beta is not queued behind acme's burst


def test_the_running_limit_comes_from_settings() -> None:
    assert ApiLimits.from_settings(Settings(jobs_running=3)).jobs.max_running == 3
    assert ApiLimits.from_settings(Settings()).max_running is None  # in process: half the pool
    assert queue_name("acme") != queue_name("acme2")
    assert " " not in queue_name("a/b c") and "/" not in queue_name("a/b c")
