"""The background sweeps' steps over every bank of every account: find the banks, check a
bank for partitions over a threshold, compact one partition, make a bank's deletions final,
apply a bank's retention. The Prefect flows run each step as a task (`flows/`).

Each step takes the bank by id in a context acting for the bank's account (a sweep opens one
per task), so steps of different banks run apart and in any order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel

from memory import banks, retention
from memory.compaction.apply import CompactionResult, compact_partition, finish_bank, reconcile
from memory.compaction.scan import evaluate_bank
from memory.models import Bank
from memory.ops.banks import get
from memory.retention import RetentionResult
from memory.store.locks import is_local, spans_machines

if TYPE_CHECKING:
    from memory.context import Context

__all__ = [
    "BankCheck",
    "CompactionResult",
    "PartitionStep",
    "RetentionResult",
    "check",
    "compact",
    "every_bank",
    "finish",
    "lock_note",
    "retain",
]


@dataclass(frozen=True)
class PartitionStep:
    """Partition `key` of bank `bank_id`."""

    bank_id: str
    key: str


class BankCheck(BaseModel):
    """One bank's evaluation: partitions checked and those over a threshold."""

    bank_id: str
    bank_name: str
    account: str
    summarized: bool
    """True when the bank has a compaction prompt (compacting it calls an LLM)."""
    partitions: int
    over: list[str]


def every_bank(ctx: Context) -> list[Bank]:
    """Return every bank of every account, oldest first."""
    return banks.every_bank(ctx)


def check(ctx: Context, bank_id: str) -> BankCheck:
    """Finish what an interrupted compaction left (a due prune, counters off), then find the
    bank's partitions over a threshold."""
    bank = get(ctx, bank_id)
    reconcile(ctx, bank)
    evaluation = evaluate_bank(ctx, bank)
    return BankCheck(
        bank_id=bank.id,
        bank_name=bank.name,
        account=bank.account,
        summarized=bool(bank.compaction_prompt),
        partitions=evaluation.partitions,
        over=[p.key for p in evaluation.over],
    )


def compact(ctx: Context, step: PartitionStep) -> CompactionResult:
    """Compact one partition over a threshold, leaving the prune and the bank's counters to
    `finish` (once per bank); a failed summary is the result's status `failed`, its entries
    kept."""
    return compact_partition(ctx, get(ctx, step.bank_id), step.key, finish=False)


def finish(ctx: Context, bank_id: str) -> None:
    """Finish one bank after all its partitions: store its counters, then make the sweep's
    deletions final (one prune).

    Raises:
        PrunePending: the prune failed (the deletions stay marked, finished next time).
    """
    finish_bank(ctx, get(ctx, bank_id))


def retain(ctx: Context, bank_id: str) -> RetentionResult:
    """Delete one bank's expired entries for good (old versions pruned); on any bank, finish
    a deletion an earlier run left unpruned."""
    return retention.apply_retention(ctx, get(ctx, bank_id))


UNGUARDED = (
    "on object storage without a lease service (MEMBANK_LEASES=prefect) locks hold within one "
    "process only: prunes, carried-turn rewrites, compactions and session merges of two "
    "processes or machines do not wait for each other (commits stay safe), and a copy of "
    "deleted rows that a rewrite losing a race leaves in a file no version references is "
    "removed only by LanceDB's 7-day cleanup; verify does not see such files; two first "
    "writes that make the same table at once (a new bank's carried text) may fail one "
    "(LanceDB commits the later creation as an overwrite)"
)


def lock_note(ctx: Context) -> str | None:
    """Return what the storage's locks do not guarantee (object storage without a lease
    service), or None (a local folder, or leases configured)."""
    where = ctx.store.location
    if is_local(where) or spans_machines(where):
        return None
    return UNGUARDED
