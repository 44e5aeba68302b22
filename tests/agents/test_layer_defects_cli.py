"""Issue-25 defects of the agent commands, as a user types them."""

from __future__ import annotations

import json

from compaction_support import run

from memory.agents import longterm, working
from memory.context import Context


def test_remember_refuses_an_unknown_agent(ctx: Context) -> None:
    code, _, err = run(
        "memory", "remember", "--user", "ann", "--agent", "no-such-agent", "tea", context=ctx
    )
    assert code == 2
    assert "no-such-agent" in err and "membank agents list" in err
    assert longterm.memories(ctx, user="ann") == []


def test_the_support_mail_agent_chats_with_metadata(ctx: Context) -> None:
    code, out, err = run(
        "chat",
        "--agent",
        "support-mail",
        "--user",
        "ann",
        "--metadata",
        "email_from=ann@example.com",
        "--message",
        "my order 1234 has not arrived",
        "--json",
        context=ctx,
    )
    assert code == 0, err
    assert json.loads(out.splitlines()[0])["reply"]
    first = working.turns(ctx, "ann@example.com")[0]
    assert first.turn.content.startswith("my order")


def test_chat_refuses_metadata_without_a_name(ctx: Context) -> None:
    code, _, err = run(
        "chat",
        "--agent",
        "support-mail",
        "--user",
        "ann",
        "--metadata",
        "oops",
        "--message",
        "hi",
        context=ctx,
    )
    assert code == 2
    assert "NAME=VALUE" in err
