"""Hourly compaction sweep: one scan per bank finds partitions over a threshold, mapped tasks
compact them.

Summarising tasks carry the `llm` tag, so a Prefect concurrency limit on that tag (`membank
serve` creates one) caps LLM calls across every running flow. A summary's transient model
errors are retried by the provider, not by Prefect (the rule is in `flows.tasks`): a summary
that still fails fails its task and is reported, with nothing deleted, and the next sweep
tries the partition again. Deletions are
made final (pruned) once per bank after all its partitions: a prune rewrites table files,
and one per partition would cost a large bank dearly. A progress artifact moves as banks are
checked and partitions finish; a table artifact reports every bank.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, unmapped
from prefect.futures import PrefectFuture
from pydantic import BaseModel, Field

from flows.runners import sweep_task_runner
from flows.tasks import Progress, bank_task, publish_table
from memory.context import Context
from memory.models import Bank
from memory.ops import sweeps
from memory.ops.sweeps import BankCheck, CompactionResult, PartitionStep
from memory.wiring import open_context

LLM_TAG = "llm"
"""Tag of tasks that call an LLM; `membank serve` sets a concurrency limit on it."""
PROGRESS_KEY = "membank-compaction-sweep-progress"
"""Key of the sweep's progress artifact (its steps: each bank's check, then each partition
over a threshold)."""


class CompactionFailed(RuntimeError):
    """A partition's summary step failed (its entries kept); the task fails with it."""


class BankRow(BaseModel):
    """One line of the sweep's report."""

    bank: str
    account: str
    partitions: int
    compacted: int = 0
    skipped: list[str] = Field(default_factory=list)
    """`key: reason` for partitions over a threshold that were left as they are."""
    failures: list[str] = Field(default_factory=list)


@bank_task(name="evaluate", run_name="evaluate {request}", retry_delay_seconds=5)
def evaluate(ctx: Context, request: str) -> BankCheck:
    """Finish any interrupted compaction's bookkeeping, then find partitions over a threshold
    in the bank `request` (its id)."""
    return sweeps.check(ctx, request)


def _compacted(result: CompactionResult) -> CompactionResult:
    if result.status == "failed":
        raise CompactionFailed(str(result.error))  # the report puts the key in front
    return result


@bank_task(
    name="compact_with_summary",
    run_name="summarize {request.bank_id}/{request.key}",
    tags=[LLM_TAG],
    calls_llm=True,
)
def compact_with_summary(ctx: Context, request: PartitionStep) -> CompactionResult:
    """Compact one partition through the summarizer (an LLM call: no task retries)."""
    return _compacted(sweeps.compact(ctx, request))


@bank_task(
    name="compact_without_summary",
    run_name="drop {request.bank_id}/{request.key}",
    retry_delay_seconds=5,
)
def compact_without_summary(ctx: Context, request: PartitionStep) -> CompactionResult:
    """Compact one partition of a bank with no prompt: delete the overflow."""
    return _compacted(sweeps.compact(ctx, request))


@bank_task(name="prune_bank", run_name="prune {request}", retries=3)
def prune_bank(ctx: Context, request: str) -> None:
    """Make the sweep's deletions in one bank (`request`: its id) final: one prune after all
    its partitions."""
    sweeps.prune(ctx, request)


def report_rows(rows: list[BankRow]) -> list[dict[str, Any]]:
    """Return the sweep's report as table rows (one saying so when no bank was swept)."""
    table: list[dict[str, Any]] = [
        {
            "bank": row.bank,
            "account": row.account,
            "partitions checked": row.partitions,
            "compacted": row.compacted,
            "skipped (reason)": "; ".join(row.skipped) or "0",
            "failures": "; ".join(row.failures) or "0",
        }
        for row in rows
    ]
    if not table:
        table.append(
            {
                "bank": "(no bank has a compaction trigger)",
                "account": "",
                "partitions checked": 0,
                "compacted": 0,
                "skipped (reason)": "0",
                "failures": "0",
            }
        )
    return table


def _outcome(future: PrefectFuture[CompactionResult]) -> CompactionResult | BaseException:
    future.wait()
    state = future.state
    if state.is_completed():
        result: CompactionResult = future.result()
        return result
    outcome = future.result(raise_on_failure=False)
    return outcome if isinstance(outcome, BaseException) else RuntimeError(str(state.message))


def _checked(bank: Bank, future: PrefectFuture[BankCheck]) -> BankCheck | BankRow:
    """Return the bank's check, or a report row naming why its evaluation failed."""
    future.wait()
    if future.state.is_completed():
        check: BankCheck = future.result()
        return check
    failure = f"evaluation failed: {future.state.message}"
    return BankRow(bank=bank.name, account=bank.account, partitions=0, failures=[failure])


@flow(name="membank-compaction-sweep", log_prints=True, task_runner=sweep_task_runner())
def compaction_sweep(data: str | None = None) -> list[BankRow]:
    """Compact every partition over a threshold in every bank with a trigger; report it."""
    ctx = open_context(data)
    storage = ctx.store.location
    print(f"sweeping storage {storage}")
    triggered = [b for b in sweeps.every_bank(ctx) if b.has_trigger()]
    progress = Progress(PROGRESS_KEY, "Compaction sweep")
    checks = evaluate.map(unmapped(data), [b.account for b in triggered], [b.id for b in triggered])
    rows: list[BankRow] = []
    work: dict[bool, list[tuple[BankRow, BankCheck, str]]] = {True: [], False: []}
    for bank, check_future in zip(triggered, checks, strict=True):
        checked = _checked(bank, check_future)
        if isinstance(checked, BankRow):
            rows.append(checked)
        else:
            row = BankRow(
                bank=checked.bank_name, account=checked.account, partitions=checked.partitions
            )
            rows.append(row)
            work[checked.summarized].extend((row, checked, key) for key in checked.over)
        over = len(work[True]) + len(work[False])
        note = f"{len(rows)} of {len(triggered)} banks checked, {over} partitions to compact"
        progress.update(len(rows), len(triggered) + over, note)
    work = {summarized: interleaved(items) for summarized, items in work.items()}
    total, done = len(triggered) + len(work[True]) + len(work[False]), len(triggered)
    # Both kinds start at once; banks without a prompt are tallied and pruned first, so
    # they never wait for an LLM's retries.
    futures = {
        summarized: (compact_with_summary if summarized else compact_without_summary).map(
            unmapped(data),
            [check.account for _, check, _ in items],
            [PartitionStep(check.bank_id, key) for _, check, key in items],
        )
        for summarized, items in work.items()
    }
    for summarized in (False, True):
        changed: dict[str, tuple[BankRow, BankCheck]] = {}
        for (row, check, key), future in zip(work[summarized], futures[summarized], strict=True):
            outcome = _outcome(future)
            _tally(row, key, outcome)
            done += 1
            note = f"{done - len(triggered)} of {total - len(triggered)} partitions compacted"
            progress.update(done, total, note)
            if not isinstance(outcome, BaseException) and (outcome.covered or outcome.recovered):
                changed[check.bank_id] = (row, check)
        _prune(data, list(changed.values()))
    compacted = sum(r.compacted for r in rows)
    failed = sum(len(r.failures) for r in rows)
    publish_table(
        "membank-compaction-sweep",
        report_rows(rows),
        f"Compaction sweep: {compacted} partitions compacted in {len(rows)} banks, "
        f"{failed} failures" + (" (entries kept; retried next sweep)" if failed else ""),
        [f"Storage: `{storage}`"],
    )
    progress.finish(f"{compacted} partitions compacted in {len(rows)} banks, {failed} failures")
    for row in rows:
        print(
            f"{row.bank}: {row.partitions} partitions checked, {row.compacted} compacted, "
            f"{len(row.failures)} failed"
        )
    return rows


def interleaved(
    items: list[tuple[BankRow, BankCheck, str]],
) -> list[tuple[BankRow, BankCheck, str]]:
    """Return the partitions to compact taking one bank's after another's in turn (each
    bank's own order kept), so the tasks running at once are mostly of different banks:
    partitions of one bank share its table's commits and its deletion lock."""
    by_bank: dict[str, list[tuple[BankRow, BankCheck, str]]] = {}
    for item in items:
        by_bank.setdefault(item[1].bank_id, []).append(item)
    queues = list(by_bank.values())
    turns = max((len(q) for q in queues), default=0)
    return [q[i] for i in range(turns) for q in queues if i < len(q)]


def _prune(data: str | None, changed: list[tuple[BankRow, BankCheck]]) -> None:
    """Prune each bank the sweep deleted from, once; a failed prune is reported."""
    futures = prune_bank.map(
        unmapped(data), [c.account for _, c in changed], [c.bank_id for _, c in changed]
    )
    for (row, _), future in zip(changed, futures, strict=True):
        future.wait()
        if not future.state.is_completed():
            row.failures.append(f"prune (deletions not yet final): {future.state.message}")


def _tally(row: BankRow, key: str, outcome: CompactionResult | BaseException) -> None:
    """Count one partition's outcome into its bank's report row."""
    if isinstance(outcome, BaseException):
        row.failures.append(f"{key}: {outcome}")
    elif outcome.status in ("compacted", "dropped"):
        row.compacted += 1
    else:
        row.skipped.append(f"{key}: {outcome.status} {outcome.error or ''}".strip())
