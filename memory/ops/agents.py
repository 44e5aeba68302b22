"""The agent-memory use cases: the agents registry, remember, recall, list, forget, end a
conversation (and its merge), wipe a user, and a chat's turns. Each takes a typed request
and returns a typed result; the CLI, REST, MCP and the session-merge flow only translate to
and from them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from memory.agents import longterm, session, wipe
from memory.agents import registry as agents
from memory.agents.memories import Memory, RecalledMemory
from memory.agents.registry import Agent, get_agent
from memory.agents.session import (
    DEFAULT_SUMMARY_TOKENS,
    SessionMergeRequest,
    SessionMergeTrigger,
    SessionSummary,
)
from memory.agents.wipe import WipeReceipt
from memory.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from collections.abc import Callable

    from memory.agents.chat import Chat, ChatTurn
    from memory.context import Context

__all__ = [
    "DEFAULT_SUMMARY_TOKENS",
    "Agent",
    "SessionMergeRequest",
    "SessionMergeTrigger",
    "SessionSummary",
    "WipeReceipt",
]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentRequest(_Request):
    """One agent of the registry, by id."""

    agent: str


class RememberRequest(_Request):
    """A memory of `user` to keep, saved by `agent`."""

    user: str
    content: str
    agent: str | None = None
    type: str = "fact"
    tags: tuple[str, ...] = ()
    scope: str = "user"
    require_known_agent: bool = False
    """Refuse an `agent` that `membank agents list` does not show (the CLI does; REST and
    MCP callers name their own agents)."""


class RecallRequest(_Request):
    """The memories of `user` that `agent` may see, closest to `query`."""

    user: str
    query: str
    agent: str | None = None
    k: int = 10


class RecallResult(BaseModel):
    """What a recall found, best first."""

    memories: list[RecalledMemory]


class ListMemoriesRequest(_Request):
    """Every memory of `user` that `agent` may see (None: all)."""

    user: str
    agent: str | None = None


class MemoriesResult(BaseModel):
    """The memories, oldest first."""

    memories: list[Memory]


class ForgetRequest(_Request):
    """One memory of `user` to delete for good."""

    user: str
    memory_id: str
    agent: str | None = None


class WipeRequest(_Request):
    """Every trace of `user` in every layer, to delete for good."""

    user: str


class EndConversationRequest(_Request):
    """An ended conversation to merge into the user x agent session summary."""

    user: str
    agent: str
    conversation: str


class EndConversationResult(BaseModel):
    """The merge was handed over (it runs in the background)."""

    status: Literal["scheduled"] = "scheduled"
    user: str
    agent: str
    conversation: str


class ChatRequest(_Request):
    """A conversation of `user` with the known agent `agent`."""

    agent: str
    user: str
    conversation: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    """Values the agent's key templates read (`{{metadata.NAME}}`, e.g. `email_from`)."""
    model: str | None = None
    """A litellm model name (None: the settings'; a `membank/` name: the offline stand-in)."""
    token_budget: int = 2000


def known_agent(ctx: Context, agent: str | None) -> Agent | None:
    """Return the agent `agent` names (None for None).

    Raises:
        InvalidInput: no such agent (`membank agents list` shows them).
    """
    if agent is None:
        return None
    try:
        return get_agent(ctx, agent)
    except NotFound as exc:
        raise InvalidInput(f"--agent: {exc}") from None


def list_agents(ctx: Context) -> list[Agent]:
    """Return every agent (shipped and user YAML files, defined ones), by id."""
    return agents.list_agents(ctx)


def show_agent(ctx: Context, request: AgentRequest) -> Agent:
    """Return one agent.

    Raises:
        NotFound: no such agent (the message lists where agents come from).
    """
    return get_agent(ctx, request.agent)


def remember(ctx: Context, request: RememberRequest) -> Memory:
    """Store a memory (the same text with the same visibility is stored once).

    Raises:
        InvalidInput: a rule broken or an unknown agent; nothing is stored.
    """
    if request.require_known_agent:
        known_agent(ctx, request.agent)
    return longterm.remember(
        ctx,
        user=request.user,
        content=request.content,
        agent=request.agent,
        type=request.type,
        tags=request.tags,
        scope=request.scope,
    )


def recall(ctx: Context, request: RecallRequest) -> RecallResult:
    """Return the memories closest to the query, best first."""
    found = longterm.recall(
        ctx, user=request.user, query=request.query, agent=request.agent, k=request.k
    )
    return RecallResult(memories=found)


def list_memories(ctx: Context, request: ListMemoriesRequest) -> MemoriesResult:
    """Return the memories the agent may see, oldest first."""
    return MemoriesResult(memories=longterm.memories(ctx, user=request.user, agent=request.agent))


def forget(ctx: Context, request: ForgetRequest) -> Memory:
    """Delete one memory for good; returns it."""
    return longterm.forget(ctx, user=request.user, memory_id=request.memory_id, agent=request.agent)


def wipe_user(
    ctx: Context, request: WipeRequest, progress: Callable[[int, int], None] | None = None
) -> WipeReceipt:
    """Delete every trace of the user in every layer, for good; returns the receipt
    (`progress`: called with (1, layers in all) after each layer)."""
    return wipe.wipe_user(ctx, request.user, progress=progress)


def end_conversation(
    ctx: Context, request: EndConversationRequest, trigger: SessionMergeTrigger
) -> EndConversationResult:
    """Hand the conversation to the session merge; returns at once."""
    session.end_conversation(
        ctx,
        user=request.user,
        agent=request.agent,
        conversation=request.conversation,
        trigger=trigger,
    )
    return EndConversationResult(
        user=request.user, agent=request.agent, conversation=request.conversation
    )


def merge_conversation(ctx: Context, request: SessionMergeRequest) -> SessionSummary | None:
    """Merge an ended conversation into the session summary now (the flow's and the REST
    job's work); returns the summary after it."""
    return session.merge_conversation(
        ctx,
        user=request.user,
        agent=request.agent,
        conversation=request.conversation,
        max_tokens=request.max_tokens,
    )


def start_chat(ctx: Context, request: ChatRequest) -> Chat:
    """Return a conversation of the user with the agent, started from its session summary.

    Raises:
        NotFound: an unknown agent; InvalidInput: a bad user, or metadata the agent's
            conversation key needs is missing.
    """
    from memory.agents.chat import Chat, assistant_for, new_conversation_id

    return Chat(
        ctx=ctx,
        user=request.user,
        agent=get_agent(ctx, request.agent),
        assistant=assistant_for(request.model or ctx.settings.llm_model),
        token_budget=request.token_budget,
        metadata=dict(request.metadata),
        conversation=request.conversation or new_conversation_id(),
    )


def chat_turn(chat: Chat, message: str) -> ChatTurn:
    """Send one user message; returns the turn (reply, tool uses, pre-load)."""
    return chat.send(message)


def end_chat(ctx: Context, chat: Chat) -> bool:
    """End the chat, merging it into the session summary in this process; True if merged."""
    return chat.end(session.inline_trigger(ctx))
