"""An example agent loop on the memory layers: `membank chat --agent A --user U`.

Each user message: pre-load the user's relevant long-term memories into the system prompt,
ask the assistant, run the memory tools it calls through the dispatcher (bad arguments get a
tool error back, nothing stored) and ask again, until it answers in text. The assistant is a
model through litellm (`LiteLLMAssistant`, any model name), or offline the rule-based
stand-in (`RuleBasedAssistant`), labelled "rule-based assistant (offline)" wherever its
output is shown: it remembers on "remember ...", forgets on "forget <id>", recalls otherwise.

Extension points for the other layers (working and session memory), joined here when they
land in `memory/layers/`: `Chat.history` is the conversation so far (working memory will
hand back `working.context(conversation)` instead, within its `max_tokens`), and
`session_summary` is the rolling summary of this user x agent (session memory loads it at
the start and calls `end_conversation` at the end).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from memory import prompts
from memory.layers import preload, tools
from memory.layers.memories import check_agent, check_user
from memory.providers.labels import describe
from memory.providers.toolchat import ChatMessage, ToolCall

if TYPE_CHECKING:
    from memory.context import Context

RULE_BASED = "membank/rule-based"
RULE_BASED_LABEL = "rule-based assistant (offline)"
MAX_TOOL_ROUNDS = 4
"""Most rounds of tool calls in one turn before the loop stops asking."""


class Assistant(Protocol):
    """Answers a chat, possibly by calling tools first."""

    label: str
    """How its output is labelled."""

    def reply(
        self, messages: Sequence[ChatMessage], schemas: Sequence[dict[str, Any]]
    ) -> ChatMessage:
        """Return the next assistant message (text, or tool calls)."""
        ...


class ToolUse(BaseModel):
    """One tool call of a turn and what the dispatcher answered."""

    model_config = ConfigDict(extra="forbid")

    call: ToolCall
    result: tools.ToolResult


class ChatTurn(BaseModel):
    """One user message and everything the loop did to answer it."""

    model_config = ConfigDict(extra="forbid")

    user_message: str
    reply: str
    assistant: str
    """The assistant's label (offline stand-in or litellm model)."""
    preload: preload.Preload
    tool_uses: list[ToolUse] = Field(default_factory=list)


@dataclass
class Chat:
    """A conversation of one user with one agent (one instance per conversation)."""

    ctx: Context
    user: str
    agent: str
    assistant: Assistant
    max_memories: int = preload.DEFAULT_MAX_MEMORIES
    """The agent's `long_term.max_memories`."""
    token_budget: int = preload.DEFAULT_TOKEN_BUDGET
    history: list[ChatMessage] = field(default_factory=list)
    """The turns so far (extension point: working memory's context)."""
    session_summary: str = ""
    """Extension point: session memory's rolling summary of this user x agent."""

    def __post_init__(self) -> None:
        check_user(self.user)
        check_agent(self.agent)

    def send(self, message: str) -> ChatTurn:
        """Return the assistant's answer to `message`, running the tools it calls."""
        loaded = preload.preload(
            self.ctx,
            user=self.user,
            agent=self.agent,
            message=message,
            max_memories=self.max_memories,
            token_budget=self.token_budget,
        )
        system = ChatMessage(role="system", content=self._system(loaded))
        asked = ChatMessage(role="user", content=message)
        messages = [system, *self.history, asked]
        schemas = tools.tool_schemas()
        uses: list[ToolUse] = []
        reply = ""
        for _ in range(MAX_TOOL_ROUNDS):
            answer = self.assistant.reply(messages, schemas)
            messages.append(answer)
            if not answer.tool_calls:
                reply = answer.content or ""
                break
            for call in answer.tool_calls:
                result = tools.dispatch(self.ctx, self.user, self.agent, call.name, call.arguments)
                uses.append(ToolUse(call=call, result=result))
                messages.append(
                    ChatMessage(role="tool", content=result.content, tool_call_id=call.id)
                )
        else:
            reply = f"(stopped after {MAX_TOOL_ROUNDS} rounds of tool calls)"
        self.history = [*messages[1:-1], ChatMessage(role="assistant", content=reply)]
        return ChatTurn(
            user_message=message,
            reply=reply,
            assistant=self.assistant.label,
            preload=loaded,
            tool_uses=uses,
        )

    def _system(self, loaded: preload.Preload) -> str:
        parts = [loaded.text() or "No long-term memory of this user is relevant yet."]
        if self.session_summary:
            parts.insert(0, f"Summary of earlier conversations:\n{self.session_summary}")
        return prompts.render("chat_system", agent=self.agent, memories="\n\n".join(parts))


# the assistants ----------------------------------------------------------------------------


class LiteLLMAssistant:
    """A model through litellm, given the memory tools (any litellm model name)."""

    def __init__(self, model: str, *, timeout: float = 60, retries: int = 2) -> None:
        self.model = model
        self.label = describe(model)
        self.timeout = timeout
        self.retries = retries

    def reply(
        self, messages: Sequence[ChatMessage], schemas: Sequence[dict[str, Any]]
    ) -> ChatMessage:
        """Return the model's next message (text or tool calls)."""
        from memory.providers import llm

        return llm.complete_with_tools(
            self.model, messages, schemas, timeout=self.timeout, retries=self.retries
        )


_REMEMBER = re.compile(
    r"^\s*(?:please\s+)?remember(?:\s+that)?\s*[:,]?\s*(?P<rest>.+)$", re.I | re.S
)
_FORGET = re.compile(r"^\s*forget\s+(?:memory\s+)?(?P<id>[0-9a-f]{32})\s*$", re.I)
_TYPES = (
    ("instruction", re.compile(r"\b(always|never|reply|answer|call me)\b", re.I)),
    ("preference", re.compile(r"\b(prefer|prefers|like|likes|love|loves|hate|hates)\b", re.I)),
    ("relationship", re.compile(r"\b(works? with|wife|husband|partner|friend|boss)\b", re.I)),
)


class RuleBasedAssistant:
    """The offline stand-in: no model. "remember ..." stores the rest, "forget <id>" forgets
    that memory, anything else recalls the three closest memories."""

    label = RULE_BASED_LABEL

    def reply(
        self, messages: Sequence[ChatMessage], schemas: Sequence[dict[str, Any]]
    ) -> ChatMessage:
        """Return a tool call for a new user message, or text from the tool's result."""
        last = messages[-1]
        if last.role == "tool":
            return ChatMessage(role="assistant", content=_answer(last.content or "{}"))
        text = last.content or ""
        if found := _REMEMBER.match(text):
            rest = found["rest"].strip()
            kind = next((name for name, rule in _TYPES if rule.search(rest)), "fact")
            args = {"content": rest, "type": kind}
            return _call(len(messages), tools.REMEMBER, args)
        if found := _FORGET.match(text):
            return _call(len(messages), tools.FORGET, {"memory_id": found["id"].lower()})
        return _call(len(messages), tools.RECALL, {"query": text, "k": 3})


def _call(n: int, name: str, args: dict[str, Any]) -> ChatMessage:
    call = ToolCall(id=f"call-{n}", name=name, arguments=json.dumps(args, ensure_ascii=False))
    return ChatMessage(role="assistant", tool_calls=[call])


def _answer(result_json: str) -> str:
    result = json.loads(result_json)
    if "error" in result:
        return f"I could not do that: {result['error']}"
    if "remembered" in result:
        memory = result["remembered"]
        return f"Noted ({memory['type']}): {memory['content']} [memory {memory['id']}]"
    if "forgotten" in result:
        return f"Forgotten: {result['forgotten']['content']}"
    found = result.get("memories", [])
    if not found:
        return "I don't remember anything about that yet."
    lines = [f"- {m['content']} [{m['type']}, memory {m['id']}]" for m in found]
    return "Here is what I remember:\n" + "\n".join(lines)


def assistant_for(model: str) -> Assistant:
    """Return the rule-based stand-in for an offline (`membank/...`) name, else litellm's."""
    if model.startswith("membank/"):
        return RuleBasedAssistant()
    return LiteLLMAssistant(model)
