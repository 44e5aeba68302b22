"""Long work on a bank, run in the server's pool as a job: compact now, test a compaction
prompt. Each answers 202 with the job; `?wait=N` waits up to N seconds for it first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query

from memory.api.deps import Ctx, State
from memory.api.routes.jobs import status_url
from memory.api.schemas import (
    CompactRequest,
    DraftTestRequest,
    Job,
    TestCompactionRequest,
    job_out,
)
from memory.api.state import ApiState
from memory.context import Context
from memory.ops import banks, compaction, lab
from memory.ops.jobs import JobRecord
from memory.prompt_lab import BankSource

router = APIRouter(prefix="/memory_banks/{bank_id}", tags=["compaction"])
draft_router = APIRouter(prefix="/memory_banks", tags=["compaction"])
Wait = Annotated[
    float, Query(ge=0, le=30, description="seconds to wait for the job before answering")
]


def start(
    state: ApiState,
    ctx: Context,
    kind: str,
    work: Callable[[JobRecord], Any],
    wait: float,
    request: dict[str, Any] | None = None,
) -> Job:
    """Queue `work` as a job of the request's account and return it (after up to `wait` s);
    `request` is the same work as data (`memory.ops.job_kinds`), for durable jobs.

    Raises:
        TooManyJobs: the account has too many jobs queued or running (a 429).
    """
    record = state.jobs.submit(ctx.account, kind, work, request=request)
    state.jobs.wait(record, wait)
    return job_out(record, status_url(record.id))


@router.post("/compact", status_code=202, summary="Compact a memory bank now")
def compact_now(
    state: State, ctx: Ctx, bank_id: str, body: CompactRequest | None = None, wait: Wait = 0
) -> Job:
    """Compact every partition over a threshold (or one `key`); the job's result lists what
    each partition did."""
    request = compaction.CompactNow(bank_id, body.key if body else None)
    prepared = compaction.prepare(ctx, request)  # an unknown bank is a 404 now, not a job
    as_data = {"bank": prepared.bank.id, "key": request.key}
    return start(
        state, ctx, "compact", lambda _: compaction.run(ctx, prepared).partitions, wait, as_data
    )


@router.post("/test-compaction", status_code=202, summary="Test a compaction prompt")
def test_compaction(
    state: State, ctx: Ctx, bank_id: str, body: TestCompactionRequest, wait: Wait = 0
) -> Job:
    """Run the summarizer with a candidate prompt on the bank's entries (one `key`, or its
    largest partition) and judge the summary; the bank never changes. The job's result is
    the run: original entries, summary, surviving entries and the judge's evaluation."""
    request = lab.LabTest(source=BankSource(bank=bank_id, key=body.key), options=body.options())
    return _start_test(state, ctx, request, wait)


@draft_router.post("/test-compaction", status_code=202, summary="Test a prompt with no bank")
def test_compaction_draft(state: State, ctx: Ctx, body: DraftTestRequest, wait: Wait = 0) -> Job:
    """Test a compaction prompt on pasted entries or on synthetic ones generated from a
    description (the create form: no bank needed)."""
    request = lab.LabTest(source=body.lab_source(), options=body.options())
    return _start_test(state, ctx, request, wait)


def _start_test(state: ApiState, ctx: Context, request: lab.LabTest, wait: float) -> Job:
    prepared = lab.prepare_test(ctx, request)  # an unknown bank is a 404 now, not a failed job
    if prepared.bank is not None and isinstance(request.source, BankSource):
        banks.check_testable(ctx, prepared.bank, request.source.key)  # too few entries: 400 now
    as_data = request.model_dump(mode="json")
    return start(
        state, ctx, "test-compaction", lambda _: lab.run_prepared(ctx, prepared), wait, as_data
    )
