"""Daily retention sweep: one mapped, retried task per bank with a retention period."""

from __future__ import annotations

from prefect import flow, task, unmapped
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

from flows.retry import transient
from memory import banks, retention
from memory.context import open_context
from memory.sweeps import every_bank


class RetentionRow(BaseModel):
    """One line of the sweep's report."""

    bank: str
    account: str
    retention: str
    status: str
    deleted: int = 0


@task(
    retries=2,
    retry_delay_seconds=10,
    cache_policy=NO_CACHE,
    retry_condition_fn=transient,
    task_run_name="retain {bank_id}",
)
def retain(data: str | None, account: str, bank_id: str) -> retention.RetentionResult:
    """Delete one bank's expired entries for good (old versions pruned); on any bank, finish
    a deletion an earlier run left unpruned."""
    ctx = open_context(data, account=account)
    return retention.apply_retention(ctx, banks.get(ctx, bank_id))


def report_markdown(rows: list[RetentionRow], storage: str | None = None) -> str:
    """Return the sweep's report as a markdown table (and the storage swept, when given)."""
    lines = [
        "# Retention sweep",
        "",
        "| bank | account | retention | status | entries deleted |",
        "|---|---|---|---|---:|",
    ]
    lines.extend(
        f"| {r.bank} | {r.account} | {r.retention} | {r.status} | {r.deleted} |" for r in rows
    )
    if not rows:
        lines.append("| (no banks) | | | | 0 |")
    if storage:
        lines += ["", f"Storage: `{storage}`"]
    return "\n".join(lines)


@flow(name="membank-retention-sweep", log_prints=True)
def retention_sweep(data: str | None = None) -> list[RetentionRow]:
    """Apply retention to every bank with a retention period; indefinite banks keep every
    entry (their task only finishes a deletion a crash left unpruned)."""
    ctx = open_context(data)
    storage = ctx.store.location
    print(f"sweeping storage {storage}")
    every = every_bank(ctx)
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
            result: retention.RetentionResult = future.result()
            status = "untouched" if result.status == "indefinite" else result.status
            row.status, row.deleted = status, result.deleted
            if result.finished_pending:
                row.status += " (finished an interrupted deletion)"
        else:
            row.status = f"failed: {future.state.message}"
        rows.append(row)
    rows.sort(key=lambda r: r.retention != "indefinite")  # as before: indefinite banks first
    create_markdown_artifact(
        markdown=report_markdown(rows, storage),
        key="membank-retention-sweep",
        description=f"{sum(r.deleted for r in rows)} expired entries deleted in {len(rows)} banks",
    )
    for row in rows:
        print(f"{row.bank}: {row.status}, {row.deleted} deleted")
    return rows
