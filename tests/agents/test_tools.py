"""The memory tools: OpenAI-style schemas, and the dispatcher on valid and invalid calls."""

from __future__ import annotations

import json

import pytest

from memory.agents import longterm, tools
from memory.agents.memories import MEMORY_TYPE_NAMES, SCOPES
from memory.context import Context


def _rows(ctx: Context) -> int:
    bank = longterm.memory_bank(ctx)
    return 0 if bank is None else ctx.store.count(bank.id)


def test_the_schemas_describe_the_three_tools_as_openai_functions() -> None:
    schemas = {s["function"]["name"]: s for s in tools.tool_schemas()}

    assert set(schemas) == {"memory_remember", "memory_recall", "memory_forget"}
    assert json.loads(json.dumps(schemas)) == schemas  # plain JSON, as litellm sends it
    for schema in schemas.values():
        assert schema["type"] == "function" and schema["function"]["description"]
        assert schema["function"]["parameters"]["additionalProperties"] is False
    remember = schemas["memory_remember"]["function"]["parameters"]
    assert remember["required"] == ["content"]
    assert remember["properties"]["type"]["enum"] == list(MEMORY_TYPE_NAMES)
    assert remember["properties"]["scope"]["enum"] == list(SCOPES)
    assert remember["properties"]["tags"]["items"] == {"type": "string"}
    assert schemas["memory_recall"]["function"]["parameters"]["required"] == ["query"]
    assert schemas["memory_forget"]["function"]["parameters"]["required"] == ["memory_id"]


def test_valid_calls_remember_recall_and_forget(ctx: Context) -> None:
    stored = tools.dispatch(
        ctx,
        "ann",
        "chef",
        "memory_remember",
        '{"content": "Ann is vegetarian", "type": "preference", "tags": ["Food"], '
        '"scope": "agent"}',
    )
    assert stored.ok and stored.memory is not None
    assert (stored.memory.scope, stored.memory.agent, stored.memory.tags) == (
        "agent",
        "chef",
        ["food"],
    )
    memory_id = stored.memory.id
    assert json.loads(stored.content)["remembered"]["id"] == memory_id

    found = tools.dispatch(ctx, "ann", "chef", "memory_recall", '{"query": "vegetarian", "k": 3}')
    assert found.ok and [h.memory.id for h in found.memories] == [memory_id]
    listed = json.loads(found.content)["memories"]
    assert listed[0]["id"] == memory_id and listed[0]["type"] == "preference"
    other_agent = tools.dispatch(ctx, "ann", "coach", "memory_recall", '{"query": "vegetarian"}')
    assert other_agent.ok and other_agent.memories == []

    gone = tools.dispatch(ctx, "ann", "chef", "memory_forget", json.dumps({"memory_id": memory_id}))
    assert gone.ok and json.loads(gone.content)["forgotten"]["id"] == memory_id
    assert _rows(ctx) == 0


BAD_CALLS = [
    ("memory_remember", '{"content": "tea"', "not valid JSON"),
    ("memory_remember", "[1, 2]", "must be a JSON object"),
    ("memory_remember", '"tea"', "must be a JSON object"),
    ("memory_remember", "{}", "needs 'content'"),
    ("memory_remember", '{"content": "tea", "importance": 5}', "'importance' is not a parameter"),
    ("memory_remember", '{"content": 42}', "content: Input should be a valid string"),
    ("memory_remember", '{"content": "tea", "tags": "drinks"}', "tags: Input should be"),
    ("memory_remember", '{"content": "tea", "tags": [1]}', "tags.0: Input should be"),
    ("memory_remember", '{"content": "tea", "scope": "team"}', "use one of user, agent"),
    ("memory_remember", '{"content": "tea", "type": "opinion"}', "use one of fact, preference"),
    ("memory_remember", '{"content": "   "}', "memory content is empty"),
    ("memory_remember", '{"content": "tea", "tags": ["a:b"]}', "not a keyword"),
    ("memory_recall", '{"query": "tea", "k": "3"}', "k: Input should be a valid integer"),
    ("memory_recall", '{"query": "tea", "k": 0}', "greater than or equal to 1"),
    ("memory_recall", '{"query": ""}', "recall query is empty"),
    ("memory_forget", '{"memory_id": "0123456789abcdef"}', "no memory '0123456789abcdef'"),
    ("memory_forget", "", "needs 'memory_id'"),
    ("memory_delete", '{"memory_id": "x"}', "unknown tool 'memory_delete'"),
]


@pytest.mark.parametrize(("name", "arguments", "message"), BAD_CALLS)
def test_invalid_arguments_get_a_tool_error_and_store_nothing(
    ctx: Context, name: str, arguments: str, message: str
) -> None:
    kept = longterm.remember(ctx, user="ann", content="Ann drinks tea")

    result = tools.dispatch(ctx, "ann", "chef", name, arguments)

    assert not result.ok and result.error is not None
    assert message in result.error
    assert json.loads(result.content) == {"error": result.error}
    assert [m.id for m in longterm.memories(ctx, user="ann")] == [kept.id]


def test_a_model_cannot_reach_another_users_memory_by_id(ctx: Context) -> None:
    bobs = longterm.remember(ctx, user="bob", content="bob's secret")
    call = json.dumps({"memory_id": bobs.id})

    result = tools.dispatch(ctx, "ann", "chef", "memory_forget", call)

    assert not result.ok and "no memory" in (result.error or "")
    assert [m.id for m in longterm.memories(ctx, user="bob")] == [bobs.id]
