"""The one chat message model: what an agent loop sends a model, gets back and keeps as
working-memory turns (`memory.agents.turns.Turn` is this class).

A message is system, user, assistant (maybe calling tools) or tool (answering one call, tied
to it by id: providers reject a tool result whose call is missing). `memory.ports.Message`
stays the plain prompt of a text completion (`Completer.complete`), which has no tools.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    """One function call a model asked for (OpenAI style); `arguments` is its JSON text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=200)
    arguments: str = "{}"
    """The call's arguments as JSON text, as sent."""


class ChatMessage(BaseModel):
    """One message of a tool-using chat (and one turn of a conversation in working memory)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Role
    content: str = ""
    """The text ("" for an assistant message that only calls tools; None is taken as "")."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """For an assistant message: the tools it calls (each answered by a `tool` message)."""
    tool_call_id: str | None = None
    """For a tool message: the id of the call it answers."""
    name: str | None = None
    """For a tool message: the tool's name (kept in working memory; not sent)."""

    @field_validator("content", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return "" if value is None else value

    @model_validator(mode="after")
    def _check_shape(self) -> ChatMessage:
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"only assistant turns make tool calls, not {self.role!r} turns")
        if len({call.id for call in self.tool_calls}) < len(self.tool_calls):
            raise ValueError("two tool calls of one turn share an id: give each its own")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool turn needs the tool_call_id of the call it answers")
        if self.role != "tool" and self.tool_call_id is not None:
            raise ValueError("only tool turns carry a tool_call_id")
        if not self.content.strip() and not self.tool_calls:
            raise ValueError("the turn is empty: give it content (or tool calls)")
        return self

    def text(self) -> str:
        """Return the message as one line of text (for summaries and token counts)."""
        calls = "; ".join(f"calls {c.name}({c.arguments})" for c in self.tool_calls)
        parts = [self.content.strip(), calls]
        return " ".join(part for part in parts if part)

    def prose(self) -> str:
        """Return the message as one line for a summarizer to read and cut: tool calls and a
        tool's JSON result as `name: value` phrases, with no JSON text a cut could leave open
        (a summary is cut at its budget, and half a JSON object reads as broken)."""
        calls = "; ".join(
            f"called {c.name} with {json_prose(c.arguments)}" for c in self.tool_calls
        )
        content = self.content.strip()
        if self.role == "tool":
            content = json_prose(content)
        return " ".join(part for part in (content, calls) if part)

    def wire(self) -> dict[str, Any]:
        """Return the message in the OpenAI chat format litellm takes."""
        message: dict[str, Any] = {"role": self.role, "content": self.content or None}
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


def json_prose(text: str) -> str:
    """Return JSON text as `name: value` phrases ("order_id: A-1234, items: 12 items"):
    scalars as they are, lists by their length, objects by their fields; other text as is."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return _phrase(value, top=True) or "no arguments"


def _phrase(value: Any, *, top: bool = False) -> str:
    if isinstance(value, dict):
        inner = ", ".join(f"{name}: {_phrase(item)}" for name, item in value.items())
        return inner if top else f"({inner})"
    if isinstance(value, list):
        if all(not isinstance(item, dict | list) for item in value) and len(value) <= 5:
            return " / ".join(_phrase(item) for item in value) or "none"
        return f"{len(value)} item" + ("" if len(value) == 1 else "s")
    if value is None:
        return "none"
    return str(value).lower() if isinstance(value, bool) else str(value)
