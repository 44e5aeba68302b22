"""Issue-25 defects of the agent layers, each checked as a user would see it."""

from __future__ import annotations

import multiprocessing

import pytest
from session_support import AppendingCompleter, merge_killed_before_delete, write_conversation

from memory import banks
from memory.agents import session, wipe, working
from memory.agents.turns import Turn
from memory.compaction.bank import compact_bank
from memory.context import Context
from memory.errors import Conflict, InvalidInput
from memory.models import BankUpdate
from memory.testing import ScriptedCompleter
from memory.verify import verify_bank

SUMMARY = "Ann keeps locker 42 at the Berlin gym."


def _compacted_conversation(ctx: Context) -> None:
    """Ann's conversation `c1`, compacted into a summary plus her newest turn (as a bank
    given thresholds before they were refused on layer banks)."""
    said = [
        Turn(role="user", content=f"My locker at the Berlin gym is {n}42.")
        if n % 2 == 0
        else Turn(role="assistant", content=f"Noted, locker {n - 1}42.")
        for n in range(8)
    ]
    working.add_turns(ctx, "c1", said, user="ann", agent="bot")
    bank = working.working_bank(ctx)
    banks.save(ctx, bank.model_copy(update={"max_turns": 3, "compaction_prompt": "Summarize."}))
    scripted = ScriptedCompleter().enqueue(SUMMARY)
    ctx.completer = lambda: scripted
    [result] = compact_bank(ctx, banks.get(ctx, bank.id))
    assert result.summary_id is not None
    banks.save(ctx, banks.get(ctx, bank.id).model_copy(update={"max_turns": None}))


def test_another_user_cannot_write_into_a_compacted_conversation(ctx: Context) -> None:
    _compacted_conversation(ctx)
    with pytest.raises(Conflict, match="belongs to another user"):
        working.add_turn(ctx, "c1", Turn(role="user", content="bob's secret"), user="bob")
    assert all(t.user == "ann" for t in working.turns(ctx, "c1"))


def test_working_context_includes_its_compaction_summary(ctx: Context) -> None:
    _compacted_conversation(ctx)
    found = working.context(ctx, "c1", max_tokens=4000, completer=ScriptedCompleter())
    assert any(SUMMARY in m.content for m in found.messages if m.role == "system")


def test_verify_is_clean_straight_after_a_wipe_of_a_compacted_conversation(
    ctx: Context,
) -> None:
    _compacted_conversation(ctx)
    wipe.wipe_user(ctx, "ann")
    health = verify_bank(ctx, banks.get(ctx, working.WORKING_BANK))
    assert health.clean, health.problems


@pytest.mark.parametrize("bank", ["working-memory", "session-memory", "long-term-memory"])
@pytest.mark.parametrize("field", ["max_tokens", "max_turns"])
def test_layer_banks_refuse_compaction_thresholds(ctx: Context, bank: str, field: str) -> None:
    from memory.agents import longterm

    working.working_bank(ctx)
    session.session_bank(ctx)
    longterm.memory_bank(ctx, create=True)
    with pytest.raises(InvalidInput, match="never compacted"):
        banks.update(ctx, bank, BankUpdate.model_validate({field: 5}))
    assert getattr(banks.get(ctx, bank), field) is None


@pytest.mark.process
def test_a_merge_killed_before_deleting_the_old_summary_ends_with_one(ctx: Context) -> None:
    ctx.completer = AppendingCompleter
    write_conversation(ctx, "k1", "ann", "bot", "My badge is 177.")
    write_conversation(ctx, "k2", "ann", "bot", "My desk is 42.")
    session.merge_conversation(ctx, user="ann", agent="bot", conversation="k1")
    child = multiprocessing.get_context("spawn").Process(
        target=merge_killed_before_delete, args=(ctx.store.uri, ctx.account, "ann", "bot", "k2")
    )
    child.start()
    child.join()
    assert child.exitcode == -9
    bank = session.session_bank(ctx)
    assert not verify_bank(ctx, bank).clean  # two live summaries of ann x bot: verify sees them
    found = session.merge_conversation(ctx, user="ann", agent="bot", conversation="k2")
    assert found is not None and "desk is 42" in found.summary
    assert len(session.summaries(ctx, "ann", "bot")) == 1
    assert verify_bank(ctx, bank).clean


def test_a_working_summary_never_holds_tool_call_json_cut_mid_way(ctx: Context) -> None:
    import json

    from memory.providers.toolchat import ToolCall

    items = [{"sku": f"SKU-{i}", "qty": i, "note": "gift wrap please"} for i in range(12)]
    arguments = json.dumps({"order_id": "A-1234", "items": items})
    said = [
        Turn(role="user", content="Please place my order for the twelve items in my cart."),
        Turn(
            role="assistant",
            content="",
            tool_calls=[ToolCall(id="c1", name="place_order", arguments=arguments)],
        ),
        Turn(
            role="tool",
            content='{"status": "placed", "order_id": "A-1234"}',
            tool_call_id="c1",
            name="place_order",
        ),
        Turn(role="assistant", content="Your order A-1234 is placed."),
    ] + [
        Turn(role="user" if n % 2 == 0 else "assistant", content=f"Small talk {n} on the weather.")
        for n in range(10)
    ]
    working.add_turns(ctx, "c1", said, user="ann", agent="shop")
    summaries = [
        working.context(ctx, "c1", max_tokens=budget).summary or ""
        for budget in (120, 160, 200, 260, 400)
    ]
    assert not any("{" in text or '"' in text for text in summaries)
    # the call is still told, with its order id
    assert any("place_order" in text and "A-1234" in text for text in summaries)


def test_a_session_summary_keeps_a_short_verbless_request(ctx: Context) -> None:
    said = [
        Turn(role="user", content="I would like the veggie burger for pickup at 6 pm."),
        Turn(role="assistant", content="Sure, one veggie burger for pickup at 6 pm."),
        Turn(role="user", content="No onions."),
        Turn(role="assistant", content="Noted."),
    ]
    working.add_turns(ctx, "c1", said, user="ann", agent="diner")
    merged = session.merge_conversation(ctx, user="ann", agent="diner", conversation="c1")
    assert merged is not None and "No onions." in merged.summary


def test_a_session_summary_tells_a_tool_call_as_phrases_not_json(ctx: Context) -> None:
    from memory.providers.toolchat import ToolCall

    arguments = '{"content": "Maya is vegetarian.", "type": "preference", "tags": ["food"]}'
    said = [
        Turn(role="user", content="Remember that I am vegetarian."),
        Turn(
            role="assistant",
            content="Noted.",
            tool_calls=[ToolCall(id="c1", name="memory_remember", arguments=arguments)],
        ),
        Turn(role="tool", content='{"id": "m1"}', tool_call_id="c1", name="memory_remember"),
    ]
    working.add_turns(ctx, "c1", said, user="maya", agent="concierge")
    merged = session.merge_conversation(ctx, user="maya", agent="concierge", conversation="c1")
    assert merged is not None
    assert "memory_remember" in merged.summary and "Maya is vegetarian" in merged.summary
    assert "{" not in merged.summary
