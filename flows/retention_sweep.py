"""Daily retention sweep: one mapped, retried task per bank over `memory.ops.sweeps.retain`;
a progress artifact moves as banks finish, a table artifact reports them."""

from __future__ import annotations

from prefect import flow, unmapped
from pydantic import BaseModel

from flows.runners import sweep_task_runner
from flows.tasks import Progress, bank_task, publish_table
from memory.context import Context
from memory.ops import sweeps
from memory.ops.sweeps import RetentionResult
from memory.wiring import open_context

PROGRESS_KEY = "membank-retention-sweep-progress"
"""Key of the sweep's progress artifact (a bank is a step)."""


class RetentionRow(BaseModel):
    """One line of the sweep's report."""

    bank: str
    account: str
    retention: str
    status: str
    deleted: int = 0


@bank_task(name="retain", run_name="retain {request}")
def retain(ctx: Context, request: str) -> RetentionResult:
    """Delete one bank's (`request`: its id) expired entries for good (old versions pruned);
    on any bank, finish a deletion an earlier run left unpruned."""
    return sweeps.retain(ctx, request)


def report_rows(rows: list[RetentionRow]) -> list[dict[str, object]]:
    """Return the sweep's report as table rows (one saying so when there are no banks)."""
    table: list[dict[str, object]] = [
        {
            "bank": r.bank,
            "account": r.account,
            "retention": r.retention,
            "status": r.status,
            "entries deleted": r.deleted,
        }
        for r in rows
    ]
    if not table:
        table.append(
            {
                "bank": "(no banks)",
                "account": "",
                "retention": "",
                "status": "",
                "entries deleted": 0,
            }
        )
    return table


@flow(name="membank-retention-sweep", log_prints=True, task_runner=sweep_task_runner())
def retention_sweep(data: str | None = None) -> list[RetentionRow]:
    """Apply retention to every bank with a retention period; indefinite banks keep every
    entry (their task only finishes a deletion a crash left unpruned)."""
    ctx = open_context(data)
    storage = ctx.store.location
    print(f"sweeping storage {storage}")
    every = sweeps.every_bank(ctx)
    progress = Progress(PROGRESS_KEY, "Retention sweep")
    # indefinite banks too: their run deletes nothing but finishes an interrupted deletion
    futures = retain.map(unmapped(data), [b.account for b in every], [b.id for b in every])
    rows: list[RetentionRow] = []
    for bank, future in zip(every, futures, strict=True):
        future.wait()
        days = bank.retention_days
        row = RetentionRow(
            bank=bank.name,
            account=bank.account,
            retention="indefinite" if days is None else f"{days} days",
            status="",
        )
        if future.state.is_completed():
            result: RetentionResult = future.result()
            status = "untouched" if result.status == "indefinite" else result.status
            row.status, row.deleted = status, result.deleted
            if result.finished_pending:
                row.status += " (finished an interrupted deletion)"
        else:
            row.status = f"failed: {future.state.message}"
        rows.append(row)
        progress.update(len(rows), len(every), f"{len(rows)} of {len(every)} banks done")
    rows.sort(key=lambda r: r.retention != "indefinite")  # as before: indefinite banks first
    publish_table(
        "membank-retention-sweep",
        report_rows(rows),
        f"Retention sweep: {sum(r.deleted for r in rows)} expired entries deleted in "
        f"{len(rows)} banks",
        [f"Storage: `{storage}`"],
    )
    progress.finish(f"{len(rows)} banks done")
    for row in rows:
        print(f"{row.bank}: {row.status}, {row.deleted} deleted")
    return rows
