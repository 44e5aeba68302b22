"""Long work on a bank, run in the server's pool as a job: compact now, test a compaction
prompt. Each answers 202 with the job; `?wait=N` waits up to N seconds for it first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query

from memory.api.deps import Ctx, State
from memory.api.errors import ApiError
from memory.api.jobs import JobRecord, TooManyJobs
from memory.api.routes.common import bank_of
from memory.api.routes.jobs import status_url
from memory.api.schemas import (
    CompactRequest,
    DraftTestRequest,
    Job,
    TestCompactionRequest,
    job_out,
)
from memory.api.state import ApiState
from memory.compaction.bank import compact_bank
from memory.context import Context
from memory.lab import BankSource, Source, TestRun, run_test
from memory.lab.run import check_options

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
    details: dict[str, Any] | None = None,
) -> Job:
    """Queue `work` as a job of the request's account and return it (after up to `wait` s).

    Raises:
        ApiError: 429 when the account has too many jobs queued or running.
    """
    try:
        record = state.jobs.submit(ctx.account, kind, work, details)
    except TooManyJobs as exc:
        raise ApiError(429, "too_many_requests", str(exc)) from None
    state.jobs.wait(record, wait)
    return job_out(record, status_url(record.id))


@router.post("/compact", status_code=202, summary="Compact a memory bank now")
def compact_now(
    state: State, ctx: Ctx, bank_id: str, body: CompactRequest | None = None, wait: Wait = 0
) -> Job:
    """Compact every partition over a threshold (or one `key`); the job's result lists what
    each partition did."""
    bank = bank_of(ctx, bank_id)
    key = body.key if body else None
    return start(state, ctx, "compact", lambda _: compact_bank(ctx, bank, key), wait)


@router.post("/test-compaction", status_code=202, summary="Test a compaction prompt")
def test_compaction(
    state: State, ctx: Ctx, bank_id: str, body: TestCompactionRequest, wait: Wait = 0
) -> Job:
    """Run the summarizer with a candidate prompt on the bank's entries (one `key`, or its
    largest partition) and judge the summary; the bank never changes. The job's result is
    the run: original entries, summary, surviving entries and the judge's evaluation."""
    bank = bank_of(ctx, bank_id)
    source = BankSource(bank=bank.id, key=body.key)
    return start(state, ctx, "test-compaction", _test_run(ctx, source, body), wait)


@draft_router.post("/test-compaction", status_code=202, summary="Test a prompt with no bank")
def test_compaction_draft(state: State, ctx: Ctx, body: DraftTestRequest, wait: Wait = 0) -> Job:
    """Test a compaction prompt on pasted entries or on synthetic ones generated from a
    description (the create form: no bank needed)."""
    return start(state, ctx, "test-compaction", _test_run(ctx, body.lab_source(), body), wait)


def _test_run(
    ctx: Context, source: Source, body: TestCompactionRequest | DraftTestRequest
) -> Callable[[JobRecord], TestRun]:
    check_options(body.compaction_prompt, 1, body.max_tokens, body.max_turns)

    def work(_: JobRecord) -> TestRun:
        return run_test(
            ctx,
            source,
            prompt=body.compaction_prompt,
            max_tokens=body.max_tokens,
            max_turns=body.max_turns,
            save=False,
        )

    return work
