"""One chat message model: the agent loop's messages are working memory's turns."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from memory.agents.turns import ToolCall, Turn
from memory.providers.toolchat import ChatMessage


def test_a_tool_calling_reply_goes_to_the_model_as_before() -> None:
    call = ToolCall(id="c1", name="memory_recall", arguments='{"query": "diet"}')
    reply = ChatMessage(role="assistant", content=None, tool_calls=[call])
    assert isinstance(reply, Turn) and reply.content == ""
    assert reply.wire() == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "memory_recall", "arguments": '{"query": "diet"}'},
            }
        ],
    }
    answer = Turn(role="tool", content="{}", tool_call_id="c1", name="memory_recall")
    assert answer.wire() == {"role": "tool", "content": "{}", "tool_call_id": "c1"}


def test_a_message_with_nothing_in_it_is_refused() -> None:
    with pytest.raises(ValidationError, match="empty"):
        ChatMessage(role="assistant", content=None)
