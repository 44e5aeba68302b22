"""Long-term memory tools (seed 003): `memory_remember`, `memory_recall`, `memory_forget`.

Their arguments are the layer's own tool arguments (`memory.layers.tools`) plus whose memory
it is: `user`, and the `agent` asking (its scope rules decide what it sees). The account is
the caller's (the API key's over HTTP), so two accounts never share a user.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field, StrictStr

from memory.context import Context
from memory.layers import longterm
from memory.layers.memories import Memory, RecalledMemory
from memory.layers.tools import ForgetArgs, RecallArgs, RememberArgs

USER = "The user whose memory it is (your application's user id)."
AGENT = "The agent asking; scope rules decide which memories it sees (omit: all the user's)."


class Whose(BaseModel):
    """Whose memories a call reads or changes."""

    user: StrictStr = Field(description=USER)
    agent: StrictStr | None = Field(None, description=AGENT)


class Remember(RememberArgs, Whose):
    """A memory to store for a user."""


class Recall(RecallArgs, Whose):
    """A search of a user's memories."""


class Forget(ForgetArgs, Whose):
    """A memory to delete."""


class Recalled(BaseModel):
    """Memories found by recall, best first."""

    data: list[RecalledMemory]


def memory_remember(ctx: Context, args: Remember) -> Memory:
    """Store something worth keeping about a user for next time: a fact, a preference, a
    relationship or a standing instruction (the same text is stored once)."""
    return longterm.remember(
        ctx,
        user=args.user,
        agent=args.agent,
        content=args.content,
        type=args.type,
        tags=args.tags,
        scope=args.scope,
    )


def memory_recall(ctx: Context, args: Recall) -> Recalled:
    """Search a user's past memories by meaning; the closest first."""
    found = longterm.recall(ctx, user=args.user, agent=args.agent, query=args.query, k=args.k)
    return Recalled(data=found)


def memory_forget(ctx: Context, args: Forget) -> Memory:
    """Delete one memory of a user for good, when asked to forget it or it is outdated."""
    return longterm.forget(ctx, user=args.user, agent=args.agent, memory_id=args.memory_id)


TOOLS: list[Callable[..., Any]] = [memory_remember, memory_recall, memory_forget]
