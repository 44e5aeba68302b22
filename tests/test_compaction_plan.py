"""The pure compaction plan: trigger rules and which entries are kept or covered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.compaction.plan import PartitionRow, plan_partition, summary_budget, threshold_reasons
from memory.models import Bank

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def bank(**fields: object) -> Bank:
    values: dict[str, object] = {
        "id": "b1",
        "account": "acme",
        "name": "b",
        "type": "conversation",
        "mode": "balanced",
        "created_at": T0,
        "updated_at": T0,
        "compaction_prompt": "Keep facts.",
    }
    values.update(fields)
    return Bank.model_validate(values)


def rows(*tokens: int, kinds: dict[int, str] | None = None) -> list[PartitionRow]:
    kinds = kinds or {}
    return [
        PartitionRow(f"e{i}", kinds.get(i, "entry"), t, T0 + timedelta(minutes=i))  # type: ignore[arg-type]
        for i, t in enumerate(tokens)
    ]


@pytest.mark.parametrize(
    ("max_tokens", "max_turns", "entries", "tokens", "over"),
    [
        (100, None, 3, 100, False),  # at the threshold is not over it
        (100, None, 3, 101, True),
        (None, 5, 5, 10_000, False),
        (None, 5, 6, 10, True),
        (100, 5, 6, 10, True),  # either threshold triggers
        (100, 5, 2, 500, True),
        (0, 0, 1_000, 1_000_000, False),  # 0 disables
        (None, None, 1_000, 1_000_000, False),  # none set: never
        (0, 5, 6, 10, True),
    ],
)
def test_trigger_rules(
    max_tokens: int | None, max_turns: int | None, entries: int, tokens: int, over: bool
) -> None:
    b = bank(max_tokens=max_tokens, max_turns=max_turns)
    assert bool(threshold_reasons(b, entries, tokens)) is over


def test_reasons_name_each_threshold_exceeded() -> None:
    reasons = threshold_reasons(bank(max_tokens=100, max_turns=5), 6, 150)
    assert reasons == ("max_tokens: 150 > 100", "max_turns: 6 > 5")


def test_under_threshold_plans_nothing() -> None:
    plan = plan_partition(bank(max_turns=5), "k", rows(10, 10, 10))
    assert plan.action == "none" and plan.covered == () and plan.reasons == ()


def test_turns_keep_newest_and_end_at_half_with_summary() -> None:
    plan = plan_partition(bank(max_turns=10), "k", rows(*[5] * 11))
    assert plan.action == "summarize"
    # target: 5 entries, one of which is the summary -> 4 newest kept
    assert plan.kept == ("e7", "e8", "e9", "e10")
    assert plan.covered == tuple(f"e{i}" for i in range(7))
    assert len(plan.kept) + 1 <= 10 // 2


def test_tokens_leave_room_for_the_summary_budget() -> None:
    # the summary is reserved 7/8 of the target (it keeps more facts per token than verbatim
    # turns: bench/RESULTS.md, issue 14 session 8), the newest turns keep the rest
    b = bank(max_tokens=1000)
    plan = plan_partition(b, "k", rows(*[50] * 21))
    assert summary_budget(b) == 437
    # target 500 tokens, 437 reserved for the summary -> one newest entry of 50 kept
    assert plan.kept == ("e20",)
    assert plan.kept_tokens + plan.summary_budget == 1000 // 2


def test_room_the_kept_entries_leave_goes_to_the_summary() -> None:
    # reserve 437, room for kept entries 63: the newest (60) fits, the next (80) does not
    plan = plan_partition(bank(max_tokens=1000), "k", rows(*[80] * 15, 60))
    assert plan.kept == ("e15",) and plan.kept_tokens == 60
    assert plan.summary_budget == 500 - 60


def test_summary_keeps_its_reserve_beside_a_huge_newest_entry() -> None:
    b = bank(max_tokens=1000)
    plan = plan_partition(b, "k", rows(100, 100, 900))
    assert plan.kept == ("e2",)
    assert plan.summary_budget == summary_budget(b) == 437


def test_newest_turns_keep_a_floor_of_the_target() -> None:
    # small entries: the newest ones fill the eighth of the target left to them
    plan = plan_partition(bank(max_tokens=1000), "k", rows(*[10] * 101))
    assert len(plan.kept) == 6 and plan.kept_tokens == 60
    assert plan.summary_budget == 500 - 60


def test_kept_entries_are_a_contiguous_newest_suffix() -> None:
    # the newest entry fits, the one before does not: nothing older is kept even if small
    plan = plan_partition(bank(max_tokens=1000), "k", rows(10, 10, 900, 200))
    assert plan.kept == ("e3",)
    assert plan.covered == ("e0", "e1", "e2")


def test_huge_newest_entry_is_kept_verbatim() -> None:
    plan = plan_partition(bank(max_tokens=1000), "k", rows(10, 5000))
    assert plan.action == "summarize"
    assert plan.kept == ("e1",) and plan.kept_tokens == 5000
    assert plan.covered == ("e0",)


def test_newest_entry_is_kept_even_when_it_alone_exceeds_the_room() -> None:
    # max_tokens 100: summary reserve 43, room for kept entries 50 - 43 = 7 < 26
    plan = plan_partition(bank(max_tokens=100), "k", rows(26, 26, 26, 26))
    assert plan.kept == ("e3",)
    assert plan.covered == ("e0", "e1", "e2")


@pytest.mark.parametrize("prompt", ["Keep facts.", None])
def test_only_summaries_and_the_newest_entry_left_plans_nothing(prompt: str | None) -> None:
    # over max_tokens, but covering the summary alone would only rewrite it: no compaction
    b = bank(max_tokens=100, compaction_prompt=prompt)
    for partition in (rows(25, 500, kinds={0: "summary"}), rows(500)):
        plan = plan_partition(b, "k", partition)
        assert plan.reasons and plan.action == "none" and plan.covered == ()


def test_previous_summary_is_covered_so_it_is_carried_forward() -> None:
    plan = plan_partition(bank(max_turns=4), "k", rows(50, 5, 5, 5, 5, kinds={0: "summary"}))
    assert plan.covered[0] == "e0"


def test_no_prompt_drops_overflow_without_a_summary_slot() -> None:
    plan = plan_partition(bank(max_turns=10, compaction_prompt=None), "k", rows(*[5] * 11))
    assert plan.action == "drop"
    assert plan.summary_budget == 0
    assert len(plan.kept) == 5  # the whole target goes to kept entries
    assert plan.covered == tuple(f"e{i}" for i in range(6))


def test_blank_prompt_counts_as_no_prompt() -> None:
    plan = plan_partition(bank(max_turns=2, compaction_prompt="  "), "k", rows(1, 1, 1))
    assert plan.action == "drop"


def test_turns_only_budget_is_the_default() -> None:
    assert summary_budget(bank(max_turns=10)) == 512
    assert summary_budget(bank(max_tokens=40)) == 24  # floor


def test_smallest_turn_threshold_keeps_the_newest_beside_the_summary() -> None:
    plan = plan_partition(bank(max_turns=1), "k", rows(3, 3))
    assert plan.kept == ("e1",) and plan.covered == ("e0",)
    # the partition (summary + newest) stays over max_turns; with nothing new, nothing to do
    after = plan_partition(bank(max_turns=1), "k", rows(3, 3, kinds={0: "summary"}))
    assert after.reasons and after.action == "none"
