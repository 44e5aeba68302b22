"""`membank chat`: the rule-based stand-in offline, and a litellm model calling the memory tools
over HTTP (the fake OpenAI-compatible server)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from compaction_support import run
from fake_llm_server import Script, openai_endpoint

from memory.agents import longterm, session, working
from memory.agents.chat import RULE_BASED_LABEL, Chat, LiteLLMAssistant, RuleBasedAssistant
from memory.agents.config import parse_memory_config
from memory.agents.registry import Agent, define_agent
from memory.context import Context

ALL_LAYERS = {
    "session_memory": True,
    "types": [
        {"id": "working_memory", "enabled": True, "config": {"max_tokens": 4000}},
        {"id": "long_term", "enabled": True, "config": {"max_memories": 50}},
    ],
}


def _agent(agent_id: str, memory: dict[str, object] = ALL_LAYERS) -> Agent:
    return Agent(id=agent_id, memory=parse_memory_config(memory))


def test_the_rule_based_assistant_remembers_recalls_and_forgets(ctx: Context) -> None:
    chat = Chat(ctx=ctx, user="ann", agent=_agent("chef"), assistant=RuleBasedAssistant())

    stored = chat.send("Remember that I prefer green tea over coffee")
    (use,) = stored.tool_uses
    assert use.call.name == "memory_remember" and use.result.ok
    memory = use.result.memory
    assert memory is not None and memory.type == "preference"
    assert memory.content == "I prefer green tea over coffee"
    assert stored.assistant == RULE_BASED_LABEL and memory.id in stored.reply

    asked = chat.send("which tea do I drink?")
    assert asked.preload.memories[0].memory.id == memory.id  # pre-loaded before the model
    assert asked.tool_uses[0].call.name == "memory_recall"
    assert "green tea" in asked.reply

    gone = chat.send(f"forget {memory.id}")
    assert gone.tool_uses[0].result.ok and "Forgotten" in gone.reply
    assert longterm.memories(ctx, user="ann") == []
    assert chat.send("which tea do I drink?").reply == "I don't remember anything about that yet."


def test_another_user_talking_to_the_same_agent_recalls_nothing_of_the_first(
    ctx: Context,
) -> None:
    Chat(ctx=ctx, user="ann", agent=_agent("chef"), assistant=RuleBasedAssistant()).send(
        "remember my locker code is 4417"
    )
    other = Chat(ctx=ctx, user="bob", agent=_agent("chef"), assistant=RuleBasedAssistant())
    turn = other.send("what is my locker code?")
    assert turn.preload.memories == [] and "4417" not in turn.reply


def test_the_chat_command_labels_the_offline_assistant(ctx: Context) -> None:
    define_agent(ctx, _agent("chef"))
    code, out, err = run(
        "chat", "--agent", "chef", "--user", "ann", "--model", "membank/rule-based",
        "--message", "remember I am vegetarian", "--message", "am I vegetarian?",
        context=ctx,
    )  # fmt: skip
    assert code == 0, err
    assert out.count(f"[{RULE_BASED_LABEL}]") == 2 and "rule-based assistant (offline)" in out
    assert "tool memory_remember" in out and "I am vegetarian [fact" in out

    code, out, _ = run(
        "chat", "--agent", "chef", "--user", "ann", "--model", "membank/rule-based",
        "--message", "vegetarian?", "--json", context=ctx,
    )  # fmt: skip
    (turn,) = [json.loads(line) for line in out.splitlines()]
    assert turn["assistant"] == RULE_BASED_LABEL
    assert turn["preload"]["memories"][0]["memory"]["content"] == "I am vegetarian"


@pytest.mark.parametrize("user", ["", "a\nb"])
def test_the_chat_command_refuses_a_bad_user(ctx: Context, user: str) -> None:
    define_agent(ctx, _agent("chef"))
    code, _, err = run("chat", "--agent", "chef", "--user", user, "--message", "hi", context=ctx)
    assert code == 2 and "user id" in err


def test_the_chat_command_refuses_an_unknown_agent(ctx: Context) -> None:
    code, _, err = run("chat", "--agent", "nobody", "--user", "ann", "--message", "hi", context=ctx)
    assert code == 3 and "no agent 'nobody'" in err


def test_three_layers_the_next_conversation_starts_with_the_summary_and_the_memory(
    ctx: Context,
) -> None:
    agent = _agent("concierge")
    first = Chat(ctx=ctx, user="ann", agent=agent, assistant=RuleBasedAssistant())
    assert first.session_intro == ""
    first.send("remember that I prefer window seats")
    first.send("I fly to Oslo on Friday")

    stored = working.turns(ctx, first.key)  # the call and its result stored side by side
    calls = [t.turn for t in stored if t.turn.tool_calls]
    results = [t.turn for t in stored if t.turn.role == "tool"]
    assert [c.tool_calls[0].id for c in calls] == [r.tool_call_id for r in results]
    assert [t.turn.role for t in stored][:4] == ["user", "assistant", "tool", "assistant"]
    assert first.end(session.inline_trigger(ctx))

    second = Chat(ctx=ctx, user="ann", agent=agent, assistant=RuleBasedAssistant())
    turn = second.send("which seat should I book?")

    assert "Oslo" in second.session_intro and turn.session_summary
    assert turn.preload is not None
    assert turn.preload.memories[0].memory.content == "I prefer window seats"
    assert "window seats" in turn.reply
    assert second.key != first.key and working.turns(ctx, first.key) == stored


def test_an_agent_without_long_term_memory_gets_no_tools_and_no_preload(ctx: Context) -> None:
    working_only = {"types": [{"id": "working_memory", "enabled": True}]}
    chat = Chat(
        ctx=ctx, user="ann", agent=_agent("plain", working_only), assistant=RuleBasedAssistant()
    )
    turn = chat.send("remember that I like tea")
    assert turn.preload is None and turn.tool_uses == [] and "off" in turn.reply
    assert longterm.memories(ctx, user="ann") == []
    assert turn.layers == ["working"] and not chat.end(session.inline_trigger(ctx))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Script]:
    """The fake OpenAI-compatible server, with real model requests allowed towards it."""
    script = Script()
    with openai_endpoint(script, monkeypatch):
        yield script


def _tool_call(call_id: str, name: str, arguments: str) -> dict[str, object]:
    function = {"name": name, "arguments": arguments}
    return {
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


@pytest.mark.server  # the fake OpenAI-compatible server, through litellm
def test_a_litellm_model_calls_the_memory_tools_and_gets_errors_back(
    ctx: Context, server: Script
) -> None:
    server.turns = [
        _tool_call("c1", "memory_remember", '{"content": "Ann", "scope": "team"}'),
        _tool_call("c2", "memory_remember", '{"content": "Ann likes jazz", "type": "preference"}'),
    ]
    server.reply = "Noted: you like jazz."
    model = LiteLLMAssistant("openai/gpt-4o-mini")
    chat = Chat(ctx=ctx, user="ann", agent=_agent("dj"), assistant=model)

    turn = chat.send("I like jazz, remember it")

    assert turn.reply == "Noted: you like jazz." and turn.assistant.endswith("(LLM via litellm)")
    bad, good = turn.tool_uses
    assert not bad.result.ok and "use one of user, agent" in (bad.result.error or "")
    assert good.result.ok
    assert [m.content for m in longterm.memories(ctx, user="ann")] == ["Ann likes jazz"]
    requests = [body for path, body in server.requests if path.endswith("/chat/completions")]
    assert len(requests) == 3
    first = requests[0]
    assert {t["function"]["name"] for t in first["tools"]} == {
        "memory_remember",
        "memory_recall",
        "memory_forget",
    }
    assert first["messages"][0]["role"] == "system" and first["messages"][-1]["role"] == "user"
    answered = requests[1]["messages"][-1]  # the tool error went back, tied to its call
    assert answered["role"] == "tool" and answered["tool_call_id"] == "c1"
    assert "use one of user, agent" in json.loads(answered["content"])["error"]

    server.reply = "You like jazz."
    again = chat.send("what music do I like?")
    system = [b for p, b in server.requests if p.endswith("/chat/completions")][-1]["messages"][0]
    assert "Ann likes jazz" in system["content"]  # pre-loaded into the prompt
    assert again.preload.memories[0].memory.content == "Ann likes jazz"
