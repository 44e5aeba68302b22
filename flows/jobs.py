"""The API's durable jobs (deployments `membank-job/<kind>`): one flow run per job.

`memory.ops.prefect_jobs` starts a run with the job's kind, account and request (JSON) when
the API has `MEMBANK_JOBS=prefect`; the run does the work with `memory.ops.job_kinds.run`
and stores what came of it as a `membank-job` artifact of the run (the result and the
export's file, or the membank error's class and message), which the API reads back by the
flow run's id, from any API process and after a restart. A failed job's run ends Failed.

No task retries: a job is one request's work; a failure is the job's answer, as it would be
in the API process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import ArtifactCreate
from prefect.runtime import flow_run

from memory.errors import MembankError
from memory.ops import job_kinds
from memory.ops.prefect_jobs import ARTIFACT_TYPE, FLOW
from memory.wiring import open_context


@flow(name=FLOW, flow_run_name="{kind} for {account}", log_prints=True)
def job_flow(
    kind: str,
    account: str,
    request: dict[str, Any],
    data: str | None = None,
    exports_dir: str | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run one API job (`details`: what the API shows with it) and store its outcome."""
    job_id = str(flow_run.get_id())
    folder = Path(exports_dir) if exports_dir else Path.cwd() / "exports"
    try:
        ctx = open_context(data, account=account)
        outcome = job_kinds.run(ctx, kind, request, job_id=job_id, exports_dir=folder)
    except MembankError as exc:
        _store(job_id, kind, {"error": {"type": type(exc).__name__, "message": str(exc)}})
        raise
    stored = {"result": outcome.result, "file": outcome.file}
    _store(job_id, kind, stored)
    return {"kind": kind, "file": outcome.file}


def _store(job_id: str, kind: str, data: dict[str, Any]) -> None:
    """Attach `data` to the flow run as its `membank-job` artifact."""
    made = ArtifactCreate(
        type=ARTIFACT_TYPE, data=data, flow_run_id=job_id, description=f"membank {kind} job"
    )
    with get_client(sync_client=True) as client:
        client.create_artifact(made)
