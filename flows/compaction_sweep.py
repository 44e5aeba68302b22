"""Hourly compaction sweep: one scan per bank finds partitions over a threshold, mapped tasks
compact them.

Summarising tasks carry the `llm` tag, so a Prefect concurrency limit on that tag (`membank
serve` creates one) caps LLM calls across every running flow. A failed summary raises, so
Prefect retries the task; what still fails is reported, with nothing deleted. Deletions are
made final (pruned) once per bank after all its partitions: a prune rewrites table files,
and one per partition would cost a large bank dearly.
"""

from __future__ import annotations

from prefect import flow, task, unmapped
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.futures import PrefectFuture
from pydantic import BaseModel, Field

from flows.retry import transient
from memory import banks, purge
from memory.compaction.apply import CompactionResult, compact_partition, reconcile
from memory.compaction.scan import evaluate_bank
from memory.context import open_context
from memory.models import Bank
from memory.sweeps import every_bank

LLM_TAG = "llm"
"""Tag of tasks that call an LLM; `membank serve` sets a concurrency limit on it."""


class CompactionFailed(RuntimeError):
    """A partition's summary step failed; raised so Prefect retries the task."""


class BankCheck(BaseModel):
    """One bank's evaluation: partitions checked and those over a threshold."""

    bank_id: str
    bank_name: str
    account: str
    summarized: bool
    """True when the bank has a compaction prompt (its tasks call an LLM)."""
    partitions: int
    over: list[str]


class BankRow(BaseModel):
    """One line of the sweep's report."""

    bank: str
    account: str
    partitions: int
    compacted: int = 0
    skipped: list[str] = Field(default_factory=list)
    """`key: reason` for partitions over a threshold that were left as they are."""
    failures: list[str] = Field(default_factory=list)


@task(
    retries=2,
    retry_delay_seconds=5,
    cache_policy=NO_CACHE,
    retry_condition_fn=transient,
    task_run_name="evaluate {bank_id}",
)
def evaluate(data: str | None, account: str, bank_id: str) -> BankCheck:
    """Finish any interrupted compaction's bookkeeping, then find partitions over a threshold."""
    ctx = open_context(data, account=account)
    bank = banks.get(ctx, bank_id)
    reconcile(ctx, bank)
    evaluation = evaluate_bank(ctx, bank)
    return BankCheck(
        bank_id=bank.id,
        bank_name=bank.name,
        account=account,
        summarized=bool(bank.compaction_prompt),
        partitions=evaluation.partitions,
        over=[p.key for p in evaluation.over],
    )


def _compact(data: str | None, account: str, bank_id: str, key: str) -> CompactionResult:
    ctx = open_context(data, account=account)
    result = compact_partition(ctx, banks.get(ctx, bank_id), key, prune=False)
    if result.status == "failed":
        raise CompactionFailed(str(result.error))  # the report puts the key in front
    return result


@task(
    retries=3,
    retry_delay_seconds=[10, 60, 300],
    tags=[LLM_TAG],
    cache_policy=NO_CACHE,
    retry_condition_fn=transient,
    task_run_name="summarize {bank_id}/{key}",
)
def compact_with_summary(
    data: str | None, account: str, bank_id: str, key: str
) -> CompactionResult:
    """Compact one partition through the summarizer (an LLM call)."""
    return _compact(data, account, bank_id, key)


@task(
    retries=2,
    retry_delay_seconds=5,
    cache_policy=NO_CACHE,
    retry_condition_fn=transient,
    task_run_name="drop {bank_id}/{key}",
)
def compact_without_summary(
    data: str | None, account: str, bank_id: str, key: str
) -> CompactionResult:
    """Compact one partition of a bank with no prompt: delete the overflow."""
    return _compact(data, account, bank_id, key)


@task(
    retries=3,
    retry_delay_seconds=10,
    cache_policy=NO_CACHE,
    retry_condition_fn=transient,
    task_run_name="prune {bank_id}",
)
def prune_bank(data: str | None, account: str, bank_id: str) -> None:
    """Make the sweep's deletions in one bank final: one prune after all its partitions."""
    ctx = open_context(data, account=account)
    purge.prune(ctx, banks.get(ctx, bank_id))


def report_markdown(rows: list[BankRow], storage: str | None = None) -> str:
    """Return the sweep's report as a markdown table (and the storage swept, when given)."""
    lines = [
        "# Compaction sweep",
        "",
        "| bank | account | partitions checked | compacted | skipped (reason) | failures |",
        "|---|---|---:|---:|---|---|",
    ]
    for row in rows:
        skipped = "<br>".join(row.skipped) or "0"
        failures = "<br>".join(row.failures) or "0"
        lines.append(
            f"| {row.bank} | {row.account} | {row.partitions} | {row.compacted} "
            f"| {skipped} | {failures} |"
        )
    if not rows:
        lines.append("| (no bank has a compaction trigger) | | 0 | 0 | 0 | 0 |")
    if storage:
        lines += ["", f"Storage: `{storage}`"]
    return "\n".join(lines)


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


@flow(name="membank-compaction-sweep", log_prints=True)
def compaction_sweep(data: str | None = None) -> list[BankRow]:
    """Compact every partition over a threshold in every bank with a trigger; report it."""
    ctx = open_context(data)
    storage = ctx.store.location
    print(f"sweeping storage {storage}")
    triggered = [b for b in every_bank(ctx) if b.has_trigger()]
    checks = evaluate.map(unmapped(data), [b.account for b in triggered], [b.id for b in triggered])
    rows: list[BankRow] = []
    work: dict[bool, list[tuple[BankRow, BankCheck, str]]] = {True: [], False: []}
    for bank, check_future in zip(triggered, checks, strict=True):
        checked = _checked(bank, check_future)
        if isinstance(checked, BankRow):
            rows.append(checked)
            continue
        row = BankRow(
            bank=checked.bank_name, account=checked.account, partitions=checked.partitions
        )
        rows.append(row)
        work[checked.summarized].extend((row, checked, key) for key in checked.over)
    # Both kinds start at once; banks without a prompt are tallied and pruned first, so
    # they never wait for an LLM's retries.
    futures = {
        summarized: (compact_with_summary if summarized else compact_without_summary).map(
            unmapped(data),
            [check.account for _, check, _ in items],
            [check.bank_id for _, check, _ in items],
            [key for _, _, key in items],
        )
        for summarized, items in work.items()
    }
    for summarized in (False, True):
        changed: dict[str, tuple[BankRow, BankCheck]] = {}
        for (row, check, key), future in zip(work[summarized], futures[summarized], strict=True):
            outcome = _outcome(future)
            _tally(row, key, outcome)
            if not isinstance(outcome, BaseException) and (outcome.covered or outcome.recovered):
                changed[check.bank_id] = (row, check)
        _prune(data, list(changed.values()))
    compacted = sum(r.compacted for r in rows)
    failed = sum(len(r.failures) for r in rows)
    create_markdown_artifact(
        markdown=report_markdown(rows, storage),
        key="membank-compaction-sweep",
        description=(
            f"{compacted} partitions compacted in {len(rows)} banks, {failed} failures"
            + (" (entries kept; retried next sweep)" if failed else "")
        ),
    )
    for row in rows:
        print(
            f"{row.bank}: {row.partitions} partitions checked, {row.compacted} compacted, "
            f"{len(row.failures)} failed"
        )
    return rows


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
