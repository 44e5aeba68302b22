"""The compaction sweep compacts its partitions in shares (a few tasks, each compacting some
of one bank's partitions in turn): how they are cut, and what a share does when one of its
partitions fails or the share is retried (real flow runs under the temporary Prefect API)."""

from __future__ import annotations

from collections import Counter

import pytest
from compaction_support import make_bank, write_turns

from flows.shares import (
    BankGroup,
    PartitionOutcome,
    Share,
    bank_groups,
    check_group,
    plan_shares,
    run_share,
)
from memory import entries
from memory.context import Context
from memory.errors import NotFound, ProviderError
from memory.models import Bank
from memory.ops.sweeps import BankCheck, CompactionResult


def _check(bank: str, *keys: str, summarized: bool = True) -> BankCheck:
    return BankCheck(
        bank_id=bank,
        bank_name=bank,
        account="a",
        summarized=summarized,
        partitions=len(keys),
        over=list(keys),
    )


def _result(key: str, status: str = "compacted") -> CompactionResult:
    return CompactionResult.model_validate(
        {"bank_id": "b", "bank_name": "b", "key": key, "status": status, "covered": 2}
    )


def test_shares_are_of_one_bank_even_and_taken_one_bank_after_another() -> None:
    checks = [_check("x", *"12345"), _check("y", "1", "2"), _check("z", "1"), _check("w")]

    planned = plan_shares(checks, count=4)  # 8 partitions: shares of at most 2

    assert [(p.share.bank_id, p.share.keys) for p in planned] == [
        ("x", ("1", "2")),
        ("y", ("1", "2")),
        ("z", ("1",)),
        ("x", ("3",)),
        ("x", ("4", "5")),
    ]
    assert all(p.check.bank_id == p.share.bank_id for p in planned)
    every = [(p.share.bank_id, k) for p in planned for k in p.share.keys]
    assert sorted(every) == sorted((c.bank_id, k) for c in checks for k in c.over)  # once each
    assert plan_shares([], count=4) == [] and plan_shares([_check("w")]) == []


def test_banks_are_checked_in_a_few_groups_each_of_one_account() -> None:
    banks = [("a", f"a{i}") for i in range(9)] + [("b", "b0"), ("b", "b1")]
    groups = bank_groups(banks, 4)
    assert [(account, g.bank_ids) for account, g in groups] == [
        ("a", ("a0", "a1", "a2")),
        ("a", ("a3", "a4", "a5")),
        ("a", ("a6", "a7", "a8")),
        ("b", ("b0", "b1")),
    ]
    assert bank_groups([], 4) == []
    assert [g.bank_ids for _, g in bank_groups(banks[:2], 4)] == [("a0",), ("a1",)]


def test_a_bank_whose_check_fails_is_reported_and_the_others_are_checked() -> None:
    def check(bank_id: str) -> BankCheck:
        if bank_id == "gone":
            raise NotFound("no bank 'gone'")
        return _check(bank_id, "k")

    found = check_group(BankGroup(("x", "gone", "y")), check, retries_left=2)
    assert [c if isinstance(c, str) else c.bank_id for c in found] == [
        "x",
        "evaluation failed: no bank 'gone'",
        "y",
    ]


def test_a_transient_failure_retries_the_group_after_the_others_unless_it_was_the_last_try() -> (
    None
):
    checked: list[str] = []

    def check(bank_id: str) -> BankCheck:
        checked.append(bank_id)
        if bank_id == "busy":
            raise OSError("disk busy")
        return _check(bank_id, "k")

    with pytest.raises(OSError, match="disk busy"):
        check_group(BankGroup(("busy", "y")), check, retries_left=1)
    assert checked == ["busy", "y"]  # the other bank was checked before the retry
    found = check_group(BankGroup(("busy", "y")), check, retries_left=0)
    assert found[0] == "evaluation failed: disk busy" and not isinstance(found[1], str)


def test_one_share_per_bank_when_the_banks_are_smaller_than_a_share() -> None:
    checks = [_check(b, *(f"{b}{i}" for i in range(5))) for b in "abcdefgh"]

    planned = plan_shares(checks, count=8)

    assert [len(p.share.keys) for p in planned] == [5] * 8
    assert [p.share.bank_id for p in planned] == list("abcdefgh")
    assert len(plan_shares(checks, count=1)) == 8  # a share never mixes banks
    assert len(plan_shares(checks, count=40)) == 40  # one partition each at most


def test_a_failing_partition_is_reported_and_the_others_land() -> None:
    calls: list[str] = []

    def compact(key: str) -> CompactionResult:
        calls.append(key)
        if key == "p2":
            raise ProviderError("the model timed out, three times")
        if key == "p3":
            return _result(key, "failed").model_copy(update={"error": "summary refused"})
        return _result(key)

    outcomes = run_share(Share("b", ("p1", "p2", "p3", "p4")), compact, {}, retries_left=2)

    assert calls == ["p1", "p2", "p3", "p4"]  # a provider error is not retried by the task
    assert [(o.key, o.failure) for o in outcomes] == [
        ("p1", None),
        ("p2", "the model timed out, three times"),
        ("p3", "summary refused"),
        ("p4", None),
    ]


def test_a_retried_share_compacts_only_what_its_failed_attempt_did_not() -> None:
    calls: list[str] = []
    broken = {"p2"}

    def compact(key: str) -> CompactionResult:
        calls.append(key)
        if key in broken:
            broken.discard(key)
            raise OSError("disk full")
        return _result(key)

    share = Share("b", ("p1", "p2", "p3"))
    earlier: dict[str, PartitionOutcome] = {}
    with pytest.raises(OSError, match="disk full"):  # retries left: the task fails, retried
        run_share(share, compact, earlier, retries_left=1)
    outcomes = run_share(share, compact, earlier, retries_left=0)

    assert calls == ["p1", "p2", "p3", "p2"]
    assert [(o.key, o.failure, o.result and o.result.status) for o in outcomes] == [
        ("p1", None, "compacted"),
        ("p2", None, "compacted"),
        ("p3", None, "compacted"),
    ]


def test_the_last_attempt_reports_instead_of_raising() -> None:
    def compact(key: str) -> CompactionResult:
        if key == "gone":
            raise NotFound("no such bank")
        raise OSError("disk full")

    assert [o.failure for o in run_share(Share("b", ("gone",)), compact, {}, 3)] == [
        "no such bank"  # permanent: never raised for a retry
    ]
    assert [o.failure for o in run_share(Share("b", ("k",)), compact, {}, 0)] == ["disk full"]


@pytest.fixture
def compacted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times the sweep's tasks compacted each partition (by key)."""
    import flows.compaction_sweep as sweep

    counts: Counter[str] = Counter()
    real = sweep.sweeps.compact

    def counting(ctx: Context, step: object) -> CompactionResult:
        counts[step.key] += 1  # type: ignore[attr-defined]
        return real(ctx, step)  # type: ignore[arg-type]

    monkeypatch.setattr(sweep.sweeps, "compact", counting)
    return counts


def _summaries(ctx: Context, bank: Bank, key: str) -> int:
    stored = entries.load(ctx, bank, key)
    covered = Counter(i for e in stored if e.kind == "summary" for i in e.summary_of)
    kept = {e.id for e in stored if e.kind != "summary"}
    assert all(n == 1 for n in covered.values()) and not set(covered) & kept
    return sum(e.kind == "summary" for e in stored)


def test_a_share_compacts_each_of_its_partitions_exactly_once(
    prefect_api: None, data: str, writer: Context, compacted: Counter[str]
) -> None:
    from flows.compaction_sweep import compaction_sweep

    chat = make_bank(writer, "chat", max_turns=5)
    for i, key in enumerate(("p1", "p2", "p3")):
        write_turns(writer, chat, key, 8, start=100 * i)

    (row,) = compaction_sweep(data=data, shares=1)  # one task for the three

    assert (row.compacted, row.failures, row.skipped) == (3, [], [])
    assert compacted == {"p1": 1, "p2": 1, "p3": 1}
    assert [_summaries(writer, chat, k) for k in ("p1", "p2", "p3")] == [1, 1, 1]


def test_a_failing_partition_of_a_share_is_reported_and_the_others_land(
    prefect_api: None, data: str, writer: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flows.compaction_sweep as sweep

    chat = make_bank(writer, "chat", max_turns=5)
    for i, key in enumerate(("p1", "p2", "p3")):
        write_turns(writer, chat, key, 8, start=100 * i)
    real = sweep.sweeps.compact

    def failing(ctx: Context, step: object) -> CompactionResult:
        if step.key == "p2":  # type: ignore[attr-defined]
            raise ProviderError("the model is down")
        return real(ctx, step)  # type: ignore[arg-type]

    monkeypatch.setattr(sweep.sweeps, "compact", failing)

    (row,) = sweep.compaction_sweep(data=data, shares=1)

    assert row.compacted == 2
    assert row.failures == ["p2: the model is down"]
    assert [_summaries(writer, chat, k) for k in ("p1", "p2", "p3")] == [1, 0, 1]
    assert len(entries.load(writer, chat, "p2")) == 8  # nothing deleted


def test_a_retried_share_summarises_no_partition_twice(
    prefect_api: None,
    data: str,
    writer: Context,
    monkeypatch: pytest.MonkeyPatch,
    compacted: Counter[str],
) -> None:
    """A share retried (a transient failure of one of its partitions, with task retries)
    compacts only the partition that failed again; one that failed after its summary landed
    is found under its threshold then: each partition has one summary."""
    import flows.compaction_sweep as sweep

    chat = make_bank(writer, "chat", max_turns=5)
    for i, key in enumerate(("p1", "p2", "p3")):
        write_turns(writer, chat, key, 8, start=100 * i)
    counting = sweep.sweeps.compact
    broken = {"p2"}

    def once_broken(ctx: Context, step: object) -> CompactionResult:
        result = counting(ctx, step)  # type: ignore[arg-type]
        if step.key in broken:  # type: ignore[attr-defined]
            broken.clear()
            raise OSError("the disk hiccuped after the summary")
        return result

    monkeypatch.setattr(sweep.sweeps, "compact", once_broken)
    retried = sweep.compact_with_summary.with_options(retries=1, retry_delay_seconds=0)
    monkeypatch.setattr(sweep, "compact_with_summary", retried)

    (row,) = sweep.compaction_sweep(data=data, shares=1)

    assert (row.compacted, row.failures, row.skipped) == (2, [], ["p2: under_threshold"])
    assert compacted == {"p1": 1, "p2": 2, "p3": 1}  # only the failed one again
    assert [_summaries(writer, chat, k) for k in ("p1", "p2", "p3")] == [1, 1, 1]


def test_a_share_run_again_from_the_start_summarises_nothing_twice(
    data: str, writer: Context
) -> None:
    """A share rerun from scratch (Dask reruns a restarted worker's task elsewhere, with no
    memory of the first run) finds its partitions compacted: no second summary."""
    from flows.compaction_sweep import compact_with_summary

    chat = make_bank(writer, "chat", max_turns=5)
    for i, key in enumerate(("p1", "p2")):
        write_turns(writer, chat, key, 8, start=100 * i)
    share = Share(chat.id, ("p1", "p2"))

    first = compact_with_summary.fn(data, "acme", share)
    again = compact_with_summary.fn(data, "acme", share)

    assert [o.result and o.result.status for o in first] == ["compacted", "compacted"]
    assert [o.result and o.result.status for o in again] == ["under_threshold"] * 2
    assert [_summaries(writer, chat, k) for k in ("p1", "p2")] == [1, 1]
