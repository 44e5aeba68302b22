"""Jobs: the status of long work (compaction, test compaction) started by another endpoint."""

from __future__ import annotations

from fastapi import APIRouter

from memory.api.deps import Account, State
from memory.api.schemas import Job, job_out

router = APIRouter(tags=["jobs"])


def status_url(job_id: str) -> str:
    """Return where a job's status is polled."""
    return f"/jobs/{job_id}"


@router.get("/jobs/{job_id}", summary="Get a job")
def get_job(state: State, account: Account, job_id: str) -> Job:
    """A job of the account: `queued`, `running`, then `succeeded` (with its result) or `failed`."""
    return job_out(state.jobs.get(account, job_id), status_url(job_id))
