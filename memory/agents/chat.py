"""An example agent loop on the three memory layers: `membank chat --agent A --user U`.

The agent's memory configuration (`memory.agents.registry`) decides which layers run; any
combination works:
- session memory: the conversation starts with the rolling summary of this user x agent
  (`session.start_conversation`), and `end` asks for the conversation to be merged into it
  (`session.end_conversation`, through the trigger given: the Prefect deployment, or in
  process);
- working memory: every turn is stored (`working.add_turns`: a tool call and its result
  together) and the model gets `working.context(...)` within `max_tokens`, oldest turns
  summarized; without it the conversation is kept in this process only;
- long-term memory: each user message pre-loads the most relevant memories into the system
  prompt (`max_memories`, and a token budget) and the model gets the memory tools, run by the
  dispatcher (bad arguments get a tool error back, nothing stored).

The assistant is a model through litellm (`LiteLLMAssistant`, any model name), or offline
the rule-based stand-in (`RuleBasedAssistant`), labelled "rule-based assistant (offline)"
wherever its output is shown: it remembers on "remember ...", forgets on "forget <id>",
recalls otherwise.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from memory import prompts
from memory.agents import preload, session, tools, working
from memory.agents.memories import check_user
from memory.agents.registry import Agent
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
        """Return the next assistant message (text, or calls of the tools in `schemas`)."""
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
    layers: list[str]
    """The agent's enabled layers: working, session, long_term."""
    preload: preload.Preload | None
    """The long-term memories pre-loaded (None: long-term memory is off)."""
    tool_uses: list[ToolUse] = Field(default_factory=list)
    session_summary: bool = False
    """Whether the conversation started from a session summary."""
    working_summarized: int = 0
    """Older turns working memory handed over as a summary, not verbatim."""


def new_conversation_id() -> str:
    """Return a fresh conversation id (16 hex digits)."""
    return uuid.uuid4().hex[:16]


@dataclass
class Chat:
    """One conversation of one user with one agent."""

    ctx: Context
    user: str
    agent: Agent
    assistant: Assistant
    conversation: str = field(default_factory=new_conversation_id)
    token_budget: int = preload.DEFAULT_TOKEN_BUDGET
    metadata: dict[str, str] = field(default_factory=dict)
    """What the agent's key templates read as `{{metadata.NAME}}` (e.g. `email_from`)."""
    """Tokens the long-term pre-load may take in the prompt."""
    history: list[ChatMessage] = field(default_factory=list)
    """The conversation in this process (when working memory is off)."""
    session_intro: str = ""
    """The session summary this conversation started with ("" for none)."""
    key: str = field(init=False)
    """The conversation's working-memory key (the agent's `conversation_key` template)."""

    def __post_init__(self) -> None:
        check_user(self.user)
        self.key = working.conversation_key(
            self.agent, conversation=self.conversation, user=self.user, metadata=self.metadata
        )
        if self.agent.memory.session_memory:
            started = session.start_conversation(self.ctx, user=self.user, agent=self.agent.id)
            self.session_intro = "\n".join(turn.content for turn in started)

    def send(self, message: str) -> ChatTurn:
        """Return the assistant's answer to `message`, running the memory tools it calls."""
        config = self.agent.memory
        long_term, work = config.long_term(), config.working()
        loaded = None
        if long_term is not None:
            loaded = preload.preload(
                self.ctx,
                user=self.user,
                agent=self.agent.id,
                message=message,
                max_memories=long_term.max_memories,
                token_budget=self.token_budget,
            )
        earlier, summarized = self._earlier()
        system = ChatMessage(role="system", content=self._system(loaded))
        asked = ChatMessage(role="user", content=message)
        messages = [system, *earlier, asked]
        schemas = tools.tool_schemas() if long_term is not None else []
        uses: list[ToolUse] = []
        reply = ""
        for _ in range(MAX_TOOL_ROUNDS):
            answer = self.assistant.reply(messages, schemas)
            messages.append(answer)
            if not answer.tool_calls:
                reply = answer.content
                break
            for call in answer.tool_calls:
                result = self._run(call, enabled=long_term is not None)
                uses.append(ToolUse(call=call, result=result))
                messages.append(
                    ChatMessage(role="tool", content=result.content, tool_call_id=call.id)
                )
        else:
            reply = f"(stopped after {MAX_TOOL_ROUNDS} rounds of tool calls)"
            messages.append(ChatMessage(role="assistant", content=reply))
        self._keep(messages[len(earlier) + 1 :], stored=work is not None)
        return ChatTurn(
            user_message=message,
            reply=reply,
            assistant=self.assistant.label,
            layers=config.layers(),
            preload=loaded,
            tool_uses=uses,
            session_summary=bool(self.session_intro),
            working_summarized=summarized,
        )

    def end(self, trigger: session.SessionMergeTrigger) -> bool:
        """End the conversation: ask for its merge into the session summary (when session
        memory is on and the turns are in working memory); returns whether it was asked."""
        if not self.agent.memory.session_memory or self.agent.memory.working() is None:
            return False
        if not working.turns(self.ctx, self.key):
            return False
        session.end_conversation(
            self.ctx, user=self.user, agent=self.agent.id, conversation=self.key, trigger=trigger
        )
        return True

    def _earlier(self) -> tuple[list[ChatMessage], int]:
        """Return the conversation so far as messages, and how many turns were summarized."""
        work = self.agent.memory.working()
        if work is None:
            return list(self.history), 0
        handed = working.context(self.ctx, self.key, max_tokens=work.max_tokens)
        return list(handed.messages), len(handed.summarized_ids)

    def _keep(self, new: list[ChatMessage], *, stored: bool) -> None:
        """Keep this turn's messages: in working memory when it is on, else in `history`."""
        if stored:
            working.add_turns(self.ctx, self.key, new, user=self.user, agent=self.agent.id)
        else:
            self.history += new

    def _run(self, call: ToolCall, *, enabled: bool) -> tools.ToolResult:
        if not enabled:
            return tools.ToolResult(
                tool=call.name, ok=False, error="long-term memory is off for this agent"
            )
        return tools.dispatch(self.ctx, self.user, self.agent.id, call.name, call.arguments)

    def _system(self, loaded: preload.Preload | None) -> str:
        parts = []
        if self.session_intro:
            parts.append(self.session_intro)
        if loaded is not None:
            parts.append(loaded.text() or "No long-term memory of this user is relevant yet.")
        else:
            parts.append("Long-term memory is off for this agent: you have no memory tools.")
        return prompts.render("chat_system", agent=self.agent.id, memories="\n\n".join(parts))


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
        text = last.content
        if not schemas:
            return ChatMessage(
                role="assistant", content="I have no long-term memory: it is off for this agent."
            )
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
