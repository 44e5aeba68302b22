"""Chat messages with tool calls, as an agent loop sends them to a model and gets them back.

`Message` (memory.ports) is enough for summaries; an agent loop also needs the assistant's
tool calls and the `tool` messages answering them, each tied to its call by id (providers
reject a tool result whose call is missing).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ToolCall(BaseModel):
    """One function call a model asked for; `arguments` is its JSON text, as sent."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    arguments: str


class ChatMessage(BaseModel):
    """One message of a tool-using chat: system, user, assistant (maybe calling tools), tool."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """The assistant's calls (assistant messages only)."""
    tool_call_id: str | None = None
    """The call a `tool` message answers."""

    def wire(self) -> dict[str, Any]:
        """Return the message in the OpenAI chat format litellm takes."""
        message: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        if self.tool_call_id is not None:
            message["tool_call_id"] = self.tool_call_id
        return message
