"""Working memory: turns by conversation, the context within max_tokens, tool-call units kept
whole, and the per-user wipe."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.agents import working
from memory.agents.registry import Agent
from memory.agents.turns import MIN_SUMMARY_TOKENS, ToolCall, Turn, group_units, turn_tokens
from memory.agents.working import StoredTurn, build_context
from memory.context import Context
from memory.errors import Conflict, InvalidInput
from memory.models import Bank
from memory.providers.extractive import ExtractiveCompleter
from memory.testing import ScriptedCompleter

BANK = Bank(
    id="0" * 32,
    account="acme",
    name="working-memory",
    type="conversation",
    mode="fast",
    created_at=datetime(2026, 1, 1, tzinfo=UTC),
    updated_at=datetime(2026, 1, 1, tzinfo=UTC),
)
WORDS = st.lists(
    st.sampled_from(["pizza", "cheese", "order", "42", "Paris", "Monday", "refund", "blue"]),
    min_size=1,
    max_size=30,
).map(" ".join)


def call_group(index: int, results: int, answered: int, words: list[str]) -> list[Turn]:
    calls = [ToolCall(id=f"c{index}-{n}", name="lookup") for n in range(results)]
    turns = [Turn(role="assistant", content="", tool_calls=calls)]
    for n in range(answered):
        turns.append(Turn(role="tool", tool_call_id=calls[n].id, name="lookup", content=words[n]))
    return turns


@st.composite
def conversations(draw: st.DrawFn) -> list[Turn]:
    """Random threads: user and assistant text, tool calls with their results, and now and
    then an orphaned result or a call still waiting for some of its results."""
    turns: list[Turn] = []
    for index in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "calls", "orphan", "pending"]))
        words = [draw(WORDS) for _ in range(3)]
        if kind in ("user", "assistant"):
            turns.append(Turn(role=kind, content=words[0]))
        elif kind == "calls":
            n = draw(st.integers(1, 3))
            turns += call_group(index, n, n, words)
        elif kind == "pending":
            n = draw(st.integers(1, 3))
            turns += call_group(index, n, draw(st.integers(0, n - 1)), words)
        else:
            orphan = Turn(role="tool", tool_call_id=f"gone{index}", name="lookup", content=words[0])
            turns.append(orphan)
    return turns


def stored(turns: list[Turn]) -> list[StoredTurn]:
    return [
        StoredTurn(id=f"t{i}", conversation="c", user="u", agent="bot", turn=t)
        for i, t in enumerate(turns)
    ]


def assert_paired(messages: list[Turn]) -> None:
    """Every tool result directly follows its call's turn; every call has all its results."""
    index = 0
    while index < len(messages):
        message = messages[index]
        assert message.role != "tool", f"tool result without its call at {index}"
        index += 1
        if message.tool_calls:
            waiting = {c.id for c in message.tool_calls}
            while waiting:
                assert index < len(messages), "a call without its results"
                result = messages[index]
                assert result.role == "tool" and result.tool_call_id in waiting
                waiting.discard(result.tool_call_id)
                index += 1


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=conversations(), max_tokens=st.integers(64, 700))
def test_context_never_orphans_a_tool_call_and_fits_its_budget(
    turns: list[Turn], max_tokens: int
) -> None:
    thread = stored(turns)
    result = build_context(
        "c", thread, max_tokens=max_tokens, completer=ExtractiveCompleter(), bank=BANK
    )
    assert_paired(result.messages)
    assert result.tokens == sum(turn_tokens(m) for m in result.messages)
    # nothing is lost: every turn is sent verbatim or folded into the summary, once
    assert sorted(result.kept_ids + result.summarized_ids) == sorted(t.id for t in thread)
    if not result.over_budget:
        assert result.tokens <= max_tokens
        return
    # the one case it cannot fit: the newest whole unit alone (plus the smallest summary)
    units = [u for u in group_units(turns) if u.sendable]
    newest = units[-1]
    assert result.kept_ids == [thread[p].id for p in newest.positions]
    assert newest.tokens + (MIN_SUMMARY_TOKENS if result.summary else 0) > max_tokens


def test_a_short_conversation_is_handed_over_verbatim(ctx: Context) -> None:
    working.add_turn(ctx, "conv-1", Turn(role="user", content="Book a table for two."), user="ann")
    calls = [ToolCall(id="c1", name="book", arguments='{"people": 2}')]
    working.add_turns(
        ctx,
        "conv-1",
        [
            Turn(role="assistant", tool_calls=calls),
            Turn(role="tool", tool_call_id="c1", name="book", content="booked for 19:00"),
            Turn(role="assistant", content="Done: 19:00."),
        ],
        user="ann",
        agent="concierge",
    )
    result = working.context(ctx, "conv-1", max_tokens=4000)
    assert result.summary is None and not result.summarized_ids
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert result.messages[1].tool_calls == calls and result.messages[1].content == ""
    assert result.messages[2].tool_call_id == "c1"


def test_the_oldest_turns_are_summarized_through_the_summarizer(ctx: Context) -> None:
    for n in range(12):
        turn = Turn(role="user", content=f"Fact {n}: my locker is number {n}00.")
        working.add_turn(ctx, "long", turn, user="bo")
    completer = ScriptedCompleter().enqueue("Bo listed lockers 000 to 800.")
    result = working.context(ctx, "long", max_tokens=120, completer=completer)
    assert result.summary is not None and "lockers 000 to 800" in result.summary
    assert result.messages[0].role == "system" and result.tokens <= 120
    assert result.messages[-1].content == "Fact 11: my locker is number 1100."
    assert result.summarizer is not None and "scripted/test" in result.summarizer
    prompt = completer.calls[0][-1].content
    assert "bo: Fact 0: my locker is number 000." in prompt
    assert "oldest turns of the conversation" in prompt  # the working-summary prompt file


def test_a_conversation_belongs_to_one_user(ctx: Context) -> None:
    working.add_turn(ctx, "conv", Turn(role="user", content="hello"), user="ann")
    with pytest.raises(Conflict, match="belongs to another user"):
        working.add_turn(ctx, "conv", Turn(role="user", content="hi"), user="bob")
    assert [t.user for t in working.turns(ctx, "conv")] == ["ann"]


@pytest.mark.parametrize(
    "turn,message",
    [
        (dict(role="tool", content="42"), "needs the tool_call_id"),
        (dict(role="user", content="   "), "the turn is empty"),
        (dict(role="user", content="x", tool_calls=[{"id": "a", "name": "f"}]), "only assistant"),
    ],
)
def test_a_malformed_turn_is_refused(turn: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Turn.model_validate(turn)


def test_conversation_keys_from_email_senders(ctx: Context) -> None:
    mail = Agent(id="mail", conversation_key="{{metadata.email_from}}")
    key = working.conversation_key(
        mail, conversation="m-1", user="u", metadata={"email_from": "dana@example.com"}
    )
    assert key == "dana@example.com"
    with pytest.raises(InvalidInput, match="has no value"):
        working.conversation_key(mail, conversation="m-1", user="u", metadata={})
    # an agent built with auth off bypassing validation is still refused at render time
    open_inbox = Agent.model_construct(
        id="open", conversation_key="{{metadata.email_from}}", email_require_sender_auth=False
    )
    with pytest.raises(InvalidInput, match="email_require_sender_auth on"):
        working.conversation_key(
            open_inbox, conversation="m", user="u", metadata={"email_from": "x@example.com"}
        )


def test_wipe_removes_every_turn_of_the_user_only(ctx: Context) -> None:
    working.add_turn(ctx, "a1", Turn(role="user", content="ann secret 7781"), user="ann")
    working.add_turn(ctx, "a1", Turn(role="assistant", content="noted 7781"), user="ann", agent="x")
    working.add_turn(ctx, "b1", Turn(role="user", content="bob's turn"), user="bob")
    bank = working.working_bank(ctx)
    [receipt] = working.wipe_user(ctx, "ann")
    assert (receipt.layer, receipt.table, receipt.rows_removed) == ("working", bank.id, 2)
    assert receipt.version_after == ctx.store.table_version(bank.id)
    assert working.turns(ctx, "a1") == []
    assert [t.turn.content for t in working.turns(ctx, "b1")] == ["bob's turn"]
    assert ctx.store.old_version_count(bank.id) == 0  # pruned: no old version holds them
    assert not ctx.store.has_deleted_rows(bank.id)


def test_an_account_without_working_memory_reads_and_wipes_nothing(ctx: Context) -> None:
    assert working.context(ctx, "never", max_tokens=100).messages == []
    assert working.wipe_user(ctx, "nobody") == []
    assert working.turns(ctx, "never") == []
