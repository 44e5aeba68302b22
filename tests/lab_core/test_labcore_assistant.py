"""The offline config assistant: numbers derived from the stated volume (arithmetic shown),
prompts from templates, retention cues; accept applies exactly the proposal, discard nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from compaction_support import make_bank

from memory import banks
from memory.assistant import OFFLINE_ASSISTANT_LABEL, Proposal, accept, propose
from memory.config import get_template
from memory.context import Context
from memory.errors import InvalidInput, NotFound
from memory.store.lance import LanceStore


def test_support_volume_sets_the_thresholds_with_the_arithmetic_shown() -> None:
    proposal = propose("customer support, about 50 messages per day per customer")

    assert (proposal.bank_type, proposal.max_tokens, proposal.max_turns) == (
        "conversation",
        8000,
        200,
    )
    assert proposal.compaction_prompt == get_template("customer-support").compaction_prompt
    assert proposal.retention_days == 90
    assert proposal.assistant == OFFLINE_ASSISTANT_LABEL and proposal.offline
    assert (
        "50 messages/day per customer x ~40 tokens = 2,000 tokens/day; "
        "max_tokens 8,000 keeps ~4 days verbatim."
    ) in proposal.rationale
    assert any(
        line.startswith("max_turns 200 ~ 50 messages/day x 4 days") for line in proposal.rationale
    )


@pytest.mark.parametrize(
    ("description", "tokens", "turns", "shown"),
    [
        # 5/hour = 120/day x 40 = 4,800 tokens/day x 7 days = 33,600 -> 34,000
        (
            "a chat assistant, 5 messages per hour",
            34_000,
            840,
            "5 messages/hour = 120 messages/day",
        ),
        # 10/day x 40 x 4 days = 1,600 tokens; 40 turns
        ("support tickets, 10 messages a day", 1_600, 40, "10 messages/day x ~40 tokens = 400"),
        # 70/week = 10/day x 120 tokens x 14 days = 16,800 -> 17,000; 140 turns
        ("weekly meeting notes, ~70 notes per week", 17_000, 140, "70 notes/week = 10 notes/day"),
    ],
)
def test_other_volumes_and_periods_scale_the_numbers(
    description: str, tokens: int, turns: int, shown: str
) -> None:
    proposal = propose(description)

    assert (proposal.max_tokens, proposal.max_turns) == (tokens, turns)
    assert any(shown in line for line in proposal.rationale), proposal.rationale


def test_without_a_volume_the_template_numbers_are_used_and_said_so() -> None:
    proposal = propose("This bank stores customer support conversation history")

    template = get_template("customer-support")
    assert (proposal.max_tokens, proposal.max_turns) == (template.max_tokens, template.max_turns)
    assert any(line.startswith("No volume stated") for line in proposal.rationale)


@pytest.mark.parametrize(
    ("description", "bank_type", "retention"),
    [
        (
            "Configure for short-term session data that should be cleaned up weekly",
            "conversation",
            7,
        ),
        ("user preferences, keep forever", "general", None),
        ("support chats, delete them after 2 weeks", "conversation", 14),
        ("facts about each supplier, entity extraction", "general", None),
    ],
)
def test_retention_and_type_follow_the_description(
    description: str, bank_type: str, retention: int | None
) -> None:
    proposal = propose(description)

    assert (proposal.bank_type, proposal.retention_days) == (bank_type, retention)


def test_own_instructions_join_the_prompt_once() -> None:
    meeting = propose(
        "Set up compaction for a meeting notes bank - keep key decisions, discard filler"
    )
    support = propose("support chats; keep refund amounts, drop jokes")

    assert meeting.compaction_prompt == get_template("meeting-notes").compaction_prompt
    assert support.compaction_prompt.endswith("Also: keep refund amounts, drop jokes.")


def test_a_given_type_wins_over_the_keywords() -> None:
    proposal = propose("customer support notes, 20 entries per day", bank_type="general")

    assert proposal.bank_type == "general"
    assert proposal.max_turns == 20 * 30  # a general bank keeps ~30 days verbatim


@pytest.mark.parametrize("description", ["", "   ", "x" * 4001])
def test_bad_descriptions_are_refused(description: str) -> None:
    with pytest.raises(InvalidInput, match="description"):
        propose(description)


def _registry_version(ctx: Context) -> int:
    store = ctx.store
    assert isinstance(store, LanceStore)
    return int(store._registry().version)


def test_accept_applies_exactly_the_proposal(ctx: Context) -> None:
    bank = make_bank(ctx, max_tokens=100, max_turns=5, retention_days=30)
    proposal = propose("customer support, about 50 messages per day per customer")

    updated = accept(ctx, "chat", proposal)

    stored = banks.get(ctx, bank.id)
    assert stored == updated
    assert (
        stored.compaction_prompt,
        stored.max_tokens,
        stored.max_turns,
        stored.retention_days,
    ) == (
        proposal.compaction_prompt,
        proposal.max_tokens,
        proposal.max_turns,
        proposal.retention_days,
    )
    assert (stored.name, stored.type, stored.mode) == (bank.name, bank.type, bank.mode)


def test_accept_of_no_thresholds_and_indefinite_retention_clears_them(ctx: Context) -> None:
    make_bank(ctx, max_tokens=100, max_turns=5, retention_days=30)
    proposal = Proposal(
        bank_type="conversation",
        compaction_prompt="Keep names.",
        max_tokens=None,
        max_turns=None,
        retention_days=None,
        rationale=["by hand"],
        assistant=OFFLINE_ASSISTANT_LABEL,
        offline=True,
    )

    stored = accept(ctx, "chat", proposal)

    assert (stored.max_tokens, stored.max_turns, stored.retention_days) == (None, None, None)


def test_a_proposal_alone_changes_nothing(ctx: Context) -> None:
    bank = make_bank(ctx)
    version = _registry_version(ctx)

    propose("customer support, about 50 messages per day per customer")

    assert banks.get(ctx, bank.id) == bank
    assert _registry_version(ctx) == version


def test_accept_refuses_another_type_and_changes_nothing(ctx: Context) -> None:
    bank = make_bank(ctx)
    version = _registry_version(ctx)
    proposal = propose("user preferences, keep forever")

    with pytest.raises(InvalidInput, match="for a general bank, but bank 'chat' is a conversation"):
        accept(ctx, "chat", proposal)
    with pytest.raises(NotFound):
        accept(ctx, "missing", proposal)

    assert banks.get(ctx, bank.id) == bank
    assert _registry_version(ctx) == version


NOTE = (
    "Decided: the Leeds office moves to the new build in spring; Priya owns the plan and the "
    "budget."
)
"""23 tokens: every entry of the statistics test is this one."""


def test_an_existing_banks_statistics_set_the_numbers_and_its_mode_is_kept(ctx: Context) -> None:
    from memory import entries
    from memory.models import BankCreate, EntryIn
    from memory.ops import lab

    bank = banks.create(ctx, BankCreate(name="notes", template="meeting-notes", mode="fast"))
    start = ctx.clock.now() - timedelta(days=10)
    rows = [  # 2 keys x 60 entries over the last 10 days: 6 entries/day per key
        EntryIn(key=key, speaker="ann", content=NOTE, created_at=start + timedelta(hours=4 * i))
        for key in ("weekly", "retro")
        for i in range(60)
    ]
    entries.write(ctx, bank, rows)
    asked = lab.ProposeRequest(description="weekly meeting notes, delete them after 1 week")

    proposal = lab.propose(ctx, asked.model_copy(update={"bank": "notes"}))
    fresh = lab.propose(ctx, asked)  # for a new bank: the template's numbers and mode

    # 6 entries/day x 23 tokens x 14 days (meeting notes stay verbatim 2 weeks) = 1,932
    assert (proposal.max_tokens, proposal.max_turns, proposal.retention_days) == (1900, 84, 7)
    assert (fresh.max_tokens, fresh.max_turns) == (6000, 150)
    assert (proposal.mode, fresh.mode) == ("fast", "accurate")  # the bank's own; the template's
    why = "\n".join(proposal.rationale)
    assert (
        "From bank 'notes''s statistics: 120 entries in 2 keys over 10 days = 6 entries/day "
        "per key" in why
    )
    assert "6 entries/day per key x ~23 tokens (the bank's average entry) = 138 tokens/day" in why
    assert "Its keys hold ~1,380 tokens on average (the largest ~1,380, 60 entries)" in why
    assert "retention 7 days deletes most of them at the next retention run" in why
    assert "Mode fast: bank 'notes' keeps its own" in why
    assert lab.accept(ctx, "notes", fresh).mode == "fast"  # accepting never changes a mode


@pytest.mark.parametrize(
    ("description", "mode"),
    [
        ("weekly meeting notes", "accurate"),
        ("user preferences, keep forever", "fast"),
        ("customer support chats", "balanced"),
        ("a bag of assorted notes", "balanced"),
    ],
)
def test_a_proposal_for_a_new_bank_keeps_its_templates_mode(description: str, mode: str) -> None:
    assert propose(description).mode == mode
