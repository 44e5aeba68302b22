"""How the compaction sweep hands out its partitions: in shares, one Prefect task each.

Submitting a task costs the flow's one thread about 0.1 s whatever the task does (with
prefect-dask, `serialize_context` dumps Prefect's whole settings per task:
PrefectHQ/prefect#18191), and a task run costs its worker more (Prefect's settings, clients
and state changes), against about half a second to compact a partition with a 0.3 s model;
with one task per partition the workers waited for the flow to hand out work. So a share is
up to `size` partitions of one bank (one account: one context), compacted one after another
in one task, and the sweep submits about `SHARES` of them (`plan_shares`).

A share returns one outcome per partition: one partition's failure is reported and the others
of its share still land. A share whose failure a rerun can fix (a storage or disk error, not a
summary: see `flows.tasks`) is raised while the task has retries left; the retry compacts
only the partitions the failed attempt did not (`run_share`), and one compacted again would
be found under its threshold anyway (compaction is journaled and idempotent per partition).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from pydantic import BaseModel

from flows.retry import PERMANENT, RETRIED_BELOW
from memory.ops.sweeps import BankCheck, CompactionResult

SHARES = 16
"""Shares a sweep aims for (about 4 per worker on 4 workers): fewer tasks to submit, enough
of them to even out the workers' loads. A bank's partitions are cut into shares of at most
`ceil(partitions / SHARES)`, so there may be a few more (one bank's share is never mixed
with another's)."""


@dataclass(frozen=True)
class Share:
    """Partitions `keys` of bank `bank_id`, compacted in turn by one task."""

    bank_id: str
    keys: tuple[str, ...]

    @property
    def label(self) -> str:
        """The share's name in a task run's name: bank, first key, how many."""
        more = f" and {len(self.keys) - 1} more" if len(self.keys) > 1 else ""
        return f"{self.bank_id}/{self.keys[0]}{more}"


class PartitionOutcome(BaseModel):
    """One partition of a share: what compacting it did, or why it failed (`failure`)."""

    key: str
    result: CompactionResult | None = None
    failure: str | None = None


@dataclass(frozen=True)
class PlannedShare:
    """A share with the bank check it came from (the flow reports and prunes per bank)."""

    check: BankCheck
    share: Share


def plan_shares(checks: Sequence[BankCheck], count: int = SHARES) -> list[PlannedShare]:
    """Cut the partitions over a threshold of `checks` into about `count` shares of even size
    (each of one bank, its partitions in their order), taking one bank's share after
    another's in turn, so the shares running at once are mostly of different banks: one
    bank's partitions share its table's commits and its deletion lock."""
    total = sum(len(c.over) for c in checks)
    if total == 0:
        return []
    size = math.ceil(total / max(1, count))
    queues: list[list[PlannedShare]] = []
    for check in checks:
        if not check.over:
            continue
        pieces = math.ceil(len(check.over) / size)
        cuts = [round(i * len(check.over) / pieces) for i in range(pieces + 1)]
        queues.append(
            [
                PlannedShare(check, Share(check.bank_id, tuple(check.over[a:b])))
                for a, b in pairwise(cuts)
            ]
        )
    turns = max(len(q) for q in queues)
    return [q[i] for i in range(turns) for q in queues if i < len(q)]


CHECK_GROUPS = 4
"""Tasks that check the banks (each bank's check is a scan or two: one task per bank cost
more to submit than to run)."""


@dataclass(frozen=True)
class BankGroup:
    """Banks `bank_ids` of one account, checked in turn by one task."""

    bank_ids: tuple[str, ...]

    @property
    def label(self) -> str:
        """The group's name in a task run's name: first bank, how many."""
        more = f" and {len(self.bank_ids) - 1} more" if len(self.bank_ids) > 1 else ""
        return f"{self.bank_ids[0]}{more}"


def bank_groups(
    banks: Sequence[tuple[str, str]], count: int = CHECK_GROUPS
) -> list[tuple[str, BankGroup]]:
    """Cut `banks` ((account, bank id) each) into about `count` groups of even size, each of
    one account (one context), in the order given; returns (account, group) pairs."""
    if not banks:
        return []
    size = math.ceil(len(banks) / max(1, count))
    by_account: dict[str, list[str]] = {}
    for account, bank_id in banks:
        by_account.setdefault(account, []).append(bank_id)
    return [
        (account, BankGroup(tuple(ids[start : start + size])))
        for account, ids in by_account.items()
        for start in range(0, len(ids), size)
    ]


def check_group(
    group: BankGroup, check: Callable[[str], BankCheck], retries_left: int
) -> list[BankCheck | str]:
    """Check each bank of `group` in turn; return its check, or why it failed. An error a
    rerun can fix is raised after the other banks were checked when `retries_left` (checking
    a bank again is safe: it finishes bookkeeping and reads)."""
    found: list[BankCheck | str] = []
    rerun: Exception | None = None
    for bank_id in group.bank_ids:
        try:
            found.append(check(bank_id))
        except Exception as exc:  # the group's other banks go on
            found.append(f"evaluation failed: {exc or type(exc).__name__}")
            if not isinstance(exc, (*PERMANENT, *RETRIED_BELOW)):
                rerun = exc
    if rerun is not None and retries_left > 0:
        raise rerun
    return found


Compact = Callable[[str], CompactionResult]
"""Compacts one partition (by key) of the share's bank."""


def run_share(
    share: Share,
    compact: Compact,
    earlier: dict[str, PartitionOutcome],
    retries_left: int,
) -> list[PartitionOutcome]:
    """Compact each partition of `share` in turn; return one outcome per partition.

    `earlier` holds the outcomes of a failed attempt of this share (empty at the first):
    a partition that landed then is not compacted again. An error a rerun can fix is raised
    after the other partitions ran when `retries_left`; `earlier` then holds what landed.
    """
    outcomes: list[PartitionOutcome] = []
    rerun: Exception | None = None
    for key in share.keys:
        before = earlier.get(key)
        if before is not None and before.failure is None:
            outcomes.append(before)
            continue
        try:
            result = compact(key)
        except Exception as exc:  # the share's other partitions go on
            outcomes.append(PartitionOutcome(key=key, failure=str(exc) or type(exc).__name__))
            if not isinstance(exc, (*PERMANENT, *RETRIED_BELOW)):
                rerun = exc
            continue
        failure = str(result.error) if result.status == "failed" else None
        outcomes.append(PartitionOutcome(key=key, result=result, failure=failure))
    earlier.update((o.key, o) for o in outcomes)
    if rerun is not None and retries_left > 0:
        raise rerun
    return outcomes
