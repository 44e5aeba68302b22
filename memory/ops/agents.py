"""The agent-memory use cases: the agents registry, remember, recall, list, forget, end a
conversation (and its merge), wipe a user, a chat's turns, and the admin's view of the users
(list them, show one: memories, session summaries, conversations). Each takes a typed request
and returns a typed result; the CLI, REST, MCP and the session-merge flow only translate to
and from them.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from memory.agents import identity, longterm, session, storage, wipe, working
from memory.agents import registry as agents
from memory.agents.memories import Memory, RecalledMemory, check_user
from memory.agents.registry import Agent, get_agent
from memory.agents.session import (
    DEFAULT_SUMMARY_TOKENS,
    SessionMergeRequest,
    SessionMergeTrigger,
    SessionSummary,
)
from memory.agents.wipe import WipeReceipt
from memory.agents.working import StoredTurn
from memory.errors import InvalidInput, NotFound
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from collections.abc import Callable

    from memory.agents.chat import Chat, ChatTurn
    from memory.context import Context
    from memory.models import Entry

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


class MemoryPageRequest(_Request):
    """One page of the memories of `user` that `agent` may see (None: all): `limit` after
    `cursor` (a next_cursor given out before), else from `offset`."""

    user: str
    agent: str | None = None
    limit: int = 100
    offset: int = 0
    cursor: str | None = None


class MemoryPageResult(BaseModel):
    """A page of memories, oldest first; `next_cursor` None on the last page."""

    memories: list[Memory]
    total: int
    next_cursor: str | None


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


def memory_page(ctx: Context, request: MemoryPageRequest) -> MemoryPageResult:
    """Return one page of the memories the agent may see, oldest first, read at the page's cost.

    Raises:
        InvalidInput: a bad user, agent or cursor.
    """
    from memory.types.pages import PageAfter

    after = PageAfter.parse(request.cursor) if request.cursor is not None else None
    found = longterm.memory_page(
        ctx,
        user=request.user,
        agent=request.agent,
        limit=request.limit,
        offset=request.offset,
        after=after,
    )
    following = found.next_after.cursor() if found.next_after is not None else None
    return MemoryPageResult(memories=found.memories, total=found.total, next_cursor=following)


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


# the admin's view of the users ----------------------------------------------------------


class UserOverview(BaseModel):
    """One user of the account and how much each layer holds of them."""

    user: str
    memories: int
    """Long-term memories."""
    agents: list[str]
    """Agents with a session summary of this user, by id."""
    conversations: int
    """Conversations with turns in working memory."""
    last_active_at: datetime | None
    """The newest row of the user in any layer."""


class UsersResult(BaseModel):
    """The account's users, by id."""

    account: str
    users: list[UserOverview]


class UserRequest(_Request):
    """One user of the account, by id."""

    user: str


class ConversationOverview(BaseModel):
    """One conversation of a user in working memory, with its turns, oldest first."""

    conversation: str
    agent: str | None
    turns: list[StoredTurn]
    started_at: datetime
    last_at: datetime


class UserDetail(BaseModel):
    """Everything the layers hold of one user: what `wipe_user` would delete."""

    user: str
    memories: list[Memory]
    summaries: list[SessionSummary]
    conversations: list[ConversationOverview]


def _layer_rows(ctx: Context, bank_name: str, which: EntryFilter) -> list[Entry]:
    bank = storage.existing_bank(ctx, bank_name)
    return storage.rows(ctx, bank, which) if bank is not None else []


def list_users(ctx: Context) -> UsersResult:
    """Return every user with rows in any agent layer of the account (an admin's read of
    the layer banks whole: working and session rows name their user in metadata,
    long-term memories are keyed by it)."""
    memories: dict[str, int] = {}
    agents_of: dict[str, set[str]] = {}
    conversations: dict[str, set[str]] = {}
    last: dict[str, datetime] = {}

    def seen(user: str, at: datetime) -> None:
        last[user] = max(at, last.get(user, at))

    for entry in _layer_rows(ctx, storage.LONG_TERM_BANK, EntryFilter(kind="entry")):
        memories[entry.key] = memories.get(entry.key, 0) + 1
        seen(entry.key, entry.created_at)
    for entry in _layer_rows(ctx, storage.SESSION_BANK, EntryFilter(kind="entry")):
        user, agent = entry.metadata.get("user"), entry.metadata.get("agent")
        if isinstance(user, str) and isinstance(agent, str):
            agents_of.setdefault(user, set()).add(agent)
            seen(user, entry.created_at)
    for entry in _layer_rows(ctx, storage.WORKING_BANK, EntryFilter(kind="entry")):
        user = entry.metadata.get("user")
        if isinstance(user, str) and user:
            conversations.setdefault(user, set()).add(entry.key)
            seen(user, entry.created_at)
    users = sorted(set(memories) | set(agents_of) | set(conversations))
    return UsersResult(
        account=ctx.account,
        users=[
            UserOverview(
                user=user,
                memories=memories.get(user, 0),
                agents=sorted(agents_of.get(user, ())),
                conversations=len(conversations.get(user, ())),
                last_active_at=last.get(user),
            )
            for user in users
        ],
    )


def show_user(ctx: Context, request: UserRequest) -> UserDetail:
    """Return the user's long-term memories, session summaries and conversations.

    Raises:
        InvalidInput: a blank, too long or multi-line user id.
    """
    user = request.user
    check_user(user)
    mine = identity.rows_of_user(user)
    agents_seen = {
        str(entry.metadata["agent"])
        for entry in _layer_rows(ctx, storage.SESSION_BANK, mine)
        if isinstance(entry.metadata.get("agent"), str)
    }
    summaries = [
        found
        for agent in sorted(agents_seen)
        if (found := session.session_summary(ctx, user, agent)) is not None
    ]
    keys: dict[str, list[Entry]] = {}
    for entry in _layer_rows(ctx, storage.WORKING_BANK, mine.and_(kind="entry")):
        keys.setdefault(entry.key, []).append(entry)
    conversations = []
    for key, rows in keys.items():
        turns = working.turns(ctx, key)
        conversations.append(
            ConversationOverview(
                conversation=key,
                agent=next((stored.agent for stored in turns if stored.agent), None),
                turns=turns,
                started_at=min(entry.created_at for entry in rows),
                last_at=max(entry.created_at for entry in rows),
            )
        )
    conversations.sort(key=lambda c: c.last_at, reverse=True)
    return UserDetail(
        user=user,
        memories=longterm.memories(ctx, user=user, agent=None),
        summaries=summaries,
        conversations=conversations,
    )
