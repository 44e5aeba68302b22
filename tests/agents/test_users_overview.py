"""The admin's view of the users (`memory.ops.agents.list_users` / `show_user`): who has rows
in which layer, and everything of one user, until a wipe removes it."""

from __future__ import annotations

import pytest

from memory.context import Context
from memory.errors import InvalidInput
from memory.ops import agents


def seed(ctx: Context) -> None:
    agents.remember(
        ctx, agents.RememberRequest(user="ann", content="Ann likes tea", agent="concierge")
    )
    agents.remember(ctx, agents.RememberRequest(user="bob", content="Bob plays chess"))
    chat = agents.start_chat(ctx, agents.ChatRequest(agent="concierge", user="ann"))
    agents.chat_turn(chat, "I moved to Porto last month.")
    agents.end_chat(ctx, chat)


def test_no_user_before_any_layer_row(ctx: Context) -> None:
    found = agents.list_users(ctx)
    assert found.account == ctx.account and found.users == []


def test_users_are_listed_with_what_each_layer_holds(ctx: Context) -> None:
    seed(ctx)
    users = {u.user: u for u in agents.list_users(ctx).users}
    assert sorted(users) == ["ann", "bob"]
    assert users["ann"].memories == 1 and users["ann"].agents == ["concierge"]
    assert users["ann"].conversations == 1 and users["ann"].last_active_at is not None
    assert users["bob"].memories == 1 and users["bob"].agents == []
    assert users["bob"].conversations == 0


def test_one_user_shows_memories_summary_and_turns(ctx: Context) -> None:
    seed(ctx)
    ann = agents.show_user(ctx, agents.UserRequest(user="ann"))
    assert [m.content for m in ann.memories] == ["Ann likes tea"]
    [summary] = ann.summaries
    assert summary.agent == "concierge" and "Porto" in summary.summary
    [talk] = ann.conversations
    assert talk.agent == "concierge"
    assert talk.turns[0].turn.content == "I moved to Porto last month."
    assert talk.started_at <= talk.last_at


def test_other_users_rows_never_show(ctx: Context) -> None:
    seed(ctx)
    bob = agents.show_user(ctx, agents.UserRequest(user="bob"))
    assert [m.content for m in bob.memories] == ["Bob plays chess"]
    assert bob.summaries == [] and bob.conversations == []


def test_a_wiped_user_is_no_longer_listed(ctx: Context) -> None:
    seed(ctx)
    receipt = agents.wipe_user(ctx, agents.WipeRequest(user="ann"))
    assert receipt.rows_removed > 0
    assert [u.user for u in agents.list_users(ctx).users] == ["bob"]
    ann = agents.show_user(ctx, agents.UserRequest(user="ann"))
    assert ann.memories == [] and ann.summaries == [] and ann.conversations == []


def test_a_bad_user_id_is_refused(ctx: Context) -> None:
    with pytest.raises(InvalidInput, match="user"):
        agents.show_user(ctx, agents.UserRequest(user="a\nb"))
