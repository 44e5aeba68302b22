"""Hourly compaction sweep: one scan per bank finds partitions over a threshold, a few
tasks compact them, each a share of one bank's partitions in turn (`flows.shares`: with one
task per partition, submitting the tasks kept the workers waiting).

Summarising tasks carry the `llm` tag, so a Prefect concurrency limit on that tag (`membank
serve` creates one) caps LLM calls across every running flow. A summary's transient model
errors are retried by the provider, not by Prefect (the rule is in `flows.tasks`): a summary
that still fails is reported as its partition's failure, with nothing deleted, the share's
other partitions go on, and the next sweep tries the partition again. Deletions are made
final (pruned) once per bank after all its partitions: a prune rewrites table files, and one
per partition would cost a large bank dearly. A progress artifact moves as banks are checked
and shares finish; a table artifact reports every bank.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from prefect import flow, unmapped
from prefect.futures import PrefectFuture, as_completed
from pydantic import BaseModel, Field

from flows.runners import sweep_task_runner
from flows.shares import (
    CHECK_GROUPS,
    SHARES,
    BankGroup,
    PartitionOutcome,
    PlannedShare,
    Share,
    bank_groups,
    check_group,
    plan_shares,
    run_share,
)
from flows.tasks import Progress, attempt, bank_task, publish_table
from memory.context import Context
from memory.ops import sweeps
from memory.ops.sweeps import BankCheck, CompactionResult, PartitionStep
from memory.wiring import open_context

LLM_TAG = "llm"
"""Tag of tasks that call an LLM; `membank serve` sets a concurrency limit on it."""
PROGRESS_KEY = "membank-compaction-sweep-progress"
"""Key of the sweep's progress artifact (its steps: each bank's check, then each partition
over a threshold)."""


class BankRow(BaseModel):
    """One line of the sweep's report."""

    bank: str
    account: str
    partitions: int
    compacted: int = 0
    skipped: list[str] = Field(default_factory=list)
    """`key: reason` for partitions over a threshold that were left as they are."""
    failures: list[str] = Field(default_factory=list)


@bank_task(name="evaluate", run_name="evaluate {request.label}", retry_delay_seconds=5)
def evaluate(ctx: Context, request: BankGroup) -> list[BankCheck | str]:
    """For each bank of the group in turn, finish any interrupted compaction's bookkeeping,
    then find its partitions over a threshold; its check, or why it failed."""
    return check_group(request, lambda bank_id: sweeps.check(ctx, bank_id), attempt()[1])


_EARLIER: dict[str, dict[str, PartitionOutcome]] = {}
"""Outcomes of a share's failed attempt, by task run id, for its retry (`run_share`)."""


def _compact_share(ctx: Context, share: Share) -> list[PartitionOutcome]:
    run_id, retries_left = attempt()
    earlier = _EARLIER.setdefault(run_id or share.label, {})

    def compact(key: str) -> CompactionResult:
        return sweeps.compact(ctx, PartitionStep(share.bank_id, key))

    outcomes = run_share(share, compact, earlier, retries_left)  # raised: kept for the retry
    _EARLIER.pop(run_id or share.label, None)
    return outcomes


@bank_task(
    name="compact_with_summary",
    run_name="summarize {request.label}",
    tags=[LLM_TAG],
    calls_llm=True,
)
def compact_with_summary(ctx: Context, request: Share) -> list[PartitionOutcome]:
    """Compact a share of a bank's partitions in turn through the summarizer (LLM calls: no
    task retries); one outcome per partition."""
    return _compact_share(ctx, request)


@bank_task(
    name="compact_without_summary",
    run_name="drop {request.label}",
    retry_delay_seconds=5,
)
def compact_without_summary(ctx: Context, request: Share) -> list[PartitionOutcome]:
    """Compact a share of partitions of a bank with no prompt (delete the overflow) in turn;
    one outcome per partition."""
    return _compact_share(ctx, request)


@bank_task(name="finish_bank", run_name="finish {request}", retries=3)
def finish_bank(ctx: Context, request: str) -> None:
    """Finish one bank (`request`: its id) after all its partitions: store its counters and
    make the sweep's deletions final (one prune)."""
    sweeps.finish(ctx, request)


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


@dataclass(frozen=True)
class Deadline:
    """How long a sweep waits for its tasks' answers (None: as long as they take)."""

    seconds: float | None
    started: float

    def left(self) -> float | None:
        """Return the seconds left to wait (None: no limit)."""
        if self.seconds is None:
            return None
        return max(0.0, self.started + self.seconds - time.monotonic())

    def passed(self, future: PrefectFuture[Any]) -> bool:
        """Return True when the sweep has a deadline and `future` had no answer by it."""
        return self.seconds is not None and not future.state.is_final()

    def missed(self) -> str:
        """Return why a task that did not answer in time is reported as failed."""
        return f"no answer from its worker within the sweep's {self.seconds:g} s"


def _checks(
    group: BankGroup, future: PrefectFuture[list[BankCheck | str]], deadline: Deadline
) -> list[BankCheck | str]:
    """Return each bank's check, or why its evaluation failed (the whole group's task)."""
    future.wait(timeout=deadline.left())
    if deadline.passed(future):
        return [f"evaluation failed: {deadline.missed()}"] * len(group.bank_ids)
    if future.state.is_completed():
        found: list[BankCheck | str] = future.result()
        return found
    return [f"evaluation failed: {future.state.message}"] * len(group.bank_ids)


@flow(name="membank-compaction-sweep", log_prints=True, task_runner=sweep_task_runner())
def compaction_sweep(
    data: str | None = None,
    shares: int = SHARES,
    check_groups: int = CHECK_GROUPS,
    deadline_seconds: float | None = None,
) -> list[BankRow]:
    """Check every bank with a trigger in about `check_groups` tasks, then compact every
    partition over a threshold in about `shares` tasks (each a share of one bank's
    partitions, `flows.shares`); report it.

    With `deadline_seconds`, a task with no answer that long after the sweep began is
    reported as failed and the sweep ends (the next sweep tries its partitions again): a
    worker process that stops answering (a LanceDB call that never returns,
    lancedb/lancedb#4210) does not hold the sweep, and the task runner's exit stops it.
    """
    deadline = Deadline(deadline_seconds, time.monotonic())
    ctx = open_context(data)
    storage = ctx.store.location
    print(f"sweeping storage {storage}")
    triggered = [b for b in sweeps.every_bank(ctx) if b.has_trigger()]
    progress = Progress(PROGRESS_KEY, "Compaction sweep")
    groups = bank_groups([(b.account, b.id) for b in triggered], check_groups)
    futures = evaluate.map(unmapped(data), [a for a, _ in groups], [g for _, g in groups])
    checks = {
        bank_id: checked
        for (_, group), future in zip(groups, futures, strict=True)
        for bank_id, checked in zip(group.bank_ids, _checks(group, future, deadline), strict=True)
    }
    rows: list[BankRow] = []
    found: list[tuple[BankRow, BankCheck]] = []
    for bank in triggered:
        checked = checks[bank.id]
        if isinstance(checked, str):
            rows.append(
                BankRow(bank=bank.name, account=bank.account, partitions=0, failures=[checked])
            )
        else:
            row = BankRow(
                bank=checked.bank_name, account=checked.account, partitions=checked.partitions
            )
            rows.append(row)
            found.append((row, checked))
        over = sum(len(c.over) for _, c in found)
        note = f"{len(rows)} of {len(triggered)} banks checked, {over} partitions to compact"
        progress.update(len(rows), len(triggered) + over, note)
    planned = plan_shares([c for _, c in found], shares)
    # Both kinds start at once, and each share is counted as it finishes: a bank is pruned
    # as soon as its last share is in (banks without a prompt never wait for an LLM).
    of: dict[PrefectFuture[list[PartitionOutcome]], PlannedShare] = {}
    for summarized in (False, True):
        items = [p for p in planned if p.check.summarized == summarized]
        compact = compact_with_summary if summarized else compact_without_summary
        futures = compact.map(
            unmapped(data), [p.check.account for p in items], [p.share for p in items]
        )
        of.update(zip(futures, items, strict=True))
    tally = _Tally(data, {c.bank_id: row for row, c in found}, planned)
    total = len(triggered) + sum(len(p.share.keys) for p in planned)
    done = len(triggered)
    answered: set[PrefectFuture[list[PartitionOutcome]]] = set()
    try:
        for future in as_completed(list(of), timeout=deadline.left()):
            answered.add(future)
            item = of[future]
            tally.add(item, _share_outcomes(item.share, future))
            done += len(item.share.keys)
            note = f"{done - len(triggered)} of {total - len(triggered)} partitions compacted"
            progress.update(done, total, note)
    except TimeoutError:
        for future, item in of.items():
            if future not in answered:
                missed = [
                    PartitionOutcome(key=k, failure=deadline.missed()) for k in item.share.keys
                ]
                tally.add(item, missed)
    tally.wait_for_prunes(deadline)
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


def _share_outcomes(
    share: Share, future: PrefectFuture[list[PartitionOutcome]]
) -> list[PartitionOutcome]:
    """Return the share's outcomes, or each of its partitions failed with the share's task."""
    future.wait()
    if future.state.is_completed():
        outcomes: list[PartitionOutcome] = future.result()
        return outcomes
    failure = f"its share's task failed: {future.state.message}"
    return [PartitionOutcome(key=key, failure=failure) for key in share.keys]


class _Tally:
    """Counts the shares' outcomes into their banks' report rows (as the shares finish), and
    submits a bank's prune as soon as its last share is in (once, when the sweep deleted from
    it)."""

    def __init__(self, data: str | None, rows: dict[str, BankRow], planned: list[PlannedShare]):
        self.data = data
        self.rows = rows
        self.left = Counter(p.check.bank_id for p in planned)
        self.changed: set[str] = set()
        self.prunes: list[tuple[BankRow, PrefectFuture[None]]] = []

    def add(self, item: PlannedShare, outcomes: list[PartitionOutcome]) -> None:
        """Count one share's outcomes; prune its bank if it was the bank's last share."""
        bank_id = item.check.bank_id
        row = self.rows[bank_id]
        for outcome in outcomes:
            result = outcome.result
            if outcome.failure is not None:
                row.failures.append(f"{outcome.key}: {outcome.failure}")
            elif result is not None and result.status in ("compacted", "dropped"):
                row.compacted += 1
            elif result is not None:
                row.skipped.append(f"{outcome.key}: {result.status} {result.error or ''}".strip())
            if result is not None and (result.covered or result.recovered):
                self.changed.add(bank_id)
        self.left[bank_id] -= 1
        if self.left[bank_id] == 0 and bank_id in self.changed:
            future = finish_bank.submit(self.data, item.check.account, bank_id)
            self.prunes.append((row, future))

    def wait_for_prunes(self, deadline: Deadline) -> None:
        """Wait for the prunes; a failed one is reported in its bank's row."""
        for row, future in self.prunes:
            future.wait(timeout=deadline.left())
            if deadline.passed(future):
                row.failures.append(f"prune (deletions not yet final): {deadline.missed()}")
            elif not future.state.is_completed():
                row.failures.append(f"prune (deletions not yet final): {future.state.message}")
