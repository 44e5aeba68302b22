"""Long-term memory tools (seed 003): `memory_remember`, `memory_recall`, `memory_forget`.

Their arguments are the layer's own tool arguments (`memory.agents.tools`) plus whose memory
it is: `user`, and the `agent` asking (its scope rules decide what it sees). The account is
the caller's (the API key's over HTTP), so two accounts never share a user. The per-user
wipe and the end of a conversation are not tools: an administrator's or the application's
act (REST, CLI), not a model's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field, StrictStr

from memory.agents.memories import Memory, RecalledMemory
from memory.agents.tools import ForgetArgs, RecallArgs, RememberArgs
from memory.api.mcp.tooling import ToolInput
from memory.api.routes.layers import memory_page
from memory.api.schemas import MAX_PAGE, Page
from memory.context import Context
from memory.ops import agents

USER = "The user whose memory it is (your application's user id)."
AGENT = "The agent asking; scope rules decide which memories it sees (omit: all the user's)."


class Whose(ToolInput):
    """Whose memories a call reads or changes."""

    user: StrictStr = Field(description=USER)
    agent: StrictStr | None = Field(None, description=AGENT)


class Remember(RememberArgs, Whose):
    """A memory to store for a user."""


class Recall(RecallArgs, Whose):
    """A search of a user's memories."""


class Forget(ForgetArgs, Whose):
    """A memory to delete."""


class UserMemories(Whose):
    """A page of a user's memories."""

    limit: int = Field(100, ge=1, le=MAX_PAGE, description="Page size, 1-1000.")
    offset: int = Field(0, ge=0, le=2**31 - 1, description="Items to skip (next_offset).")
    cursor: str | None = Field(
        None, max_length=200, description="next_cursor of the page before (instead of offset)."
    )


class Recalled(BaseModel):
    """Memories found by recall, best first."""

    data: list[RecalledMemory]


def memory_remember(ctx: Context, args: Remember) -> Memory:
    """Store something worth keeping about a user for next time: a fact, a preference, a
    relationship or a standing instruction (the same text is stored once)."""
    request = agents.RememberRequest(
        user=args.user,
        agent=args.agent,
        content=args.content,
        type=args.type,
        tags=tuple(args.tags),
        scope=args.scope,
    )
    return agents.remember(ctx, request)


def memory_recall(ctx: Context, args: Recall) -> Recalled:
    """Search a user's past memories by meaning; the closest first."""
    request = agents.RecallRequest(user=args.user, agent=args.agent, query=args.query, k=args.k)
    return Recalled(data=agents.recall(ctx, request).memories)


def list_user_memories(ctx: Context, args: UserMemories) -> Page[Memory]:
    """List every memory of a user the agent may see (omit agent: all), oldest first, a page
    at a time (follow next_cursor)."""
    return memory_page(ctx, args.user, args.agent, args.limit, args.offset, args.cursor)


def memory_forget(ctx: Context, args: Forget) -> Memory:
    """Delete one memory of a user for good, when asked to forget it or it is outdated."""
    request = agents.ForgetRequest(user=args.user, agent=args.agent, memory_id=args.memory_id)
    return agents.forget(ctx, request)


TOOLS: list[Callable[..., Any]] = [
    memory_remember,
    memory_recall,
    memory_forget,
    list_user_memories,
]
