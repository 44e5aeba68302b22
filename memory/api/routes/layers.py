"""The agent memory layers over HTTP: long-term remember / recall / list / forget, the end of
a conversation (its session-summary merge runs as a job), and the per-user wipe."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from memory.agents.memories import Memory
from memory.agents.session import SessionMergeRequest, SessionSummary
from memory.agents.wipe import WipeReceipt
from memory.api.deps import Ctx, State
from memory.api.models.layers import EndConversation, Recalled, RecallRequest, RememberRequest
from memory.api.routes.common import Cursor, Limit, Offset
from memory.api.routes.work import start
from memory.api.schemas import Job, Page
from memory.context import Context
from memory.ops import agents

router = APIRouter(prefix="/users/{user_id}", tags=["memory layers"])
User = Annotated[str, Path(description="the user's id in your application")]
Agent = Annotated[str | None, Query(description="the agent asking (None: any)")]


@router.post("/memories", status_code=201, summary="Remember (long-term memory)")
def remember(ctx: Ctx, user_id: User, body: RememberRequest) -> Memory:
    """Store a memory of the user (the same text with the same visibility is stored once)."""
    request = agents.RememberRequest(
        user=user_id,
        content=body.content,
        agent=body.agent,
        type=body.type,
        tags=tuple(body.tags),
        scope=body.scope,
    )
    return agents.remember(ctx, request)


@router.post("/memories/recall", summary="Recall (long-term memory)")
def recall(ctx: Ctx, user_id: User, body: RecallRequest) -> Recalled:
    """The user's memories the agent may see, closest to the query first."""
    request = agents.RecallRequest(user=user_id, query=body.query, agent=body.agent, k=body.k)
    return Recalled(data=agents.recall(ctx, request).memories)


@router.get("/memories", summary="List a user's memories")
def list_memories(
    ctx: Ctx,
    user_id: User,
    agent: Agent = None,
    limit: Limit = 100,
    offset: Offset = 0,
    cursor: Cursor = None,
) -> Page[Memory]:
    """Every memory of the user the agent may see, oldest first, a page at a time (each page
    read at its own cost, however many memories the user has); follow `next_cursor`."""
    return memory_page(ctx, user_id, agent, limit, offset, cursor)


def memory_page(
    ctx: Context, user: str, agent: str | None, limit: int, offset: int, cursor: str | None
) -> Page[Memory]:
    """Return a page of a user's memories as the REST API and the MCP tool show it."""
    request = agents.MemoryPageRequest(
        user=user, agent=agent, limit=limit, offset=offset, cursor=cursor
    )
    found = agents.memory_page(ctx, request)
    more = found.next_cursor is not None
    return Page[Memory](
        data=found.memories,
        total=found.total,
        limit=limit,
        offset=offset,
        next_offset=offset + len(found.memories) if more and cursor is None else None,
        next_cursor=found.next_cursor,
    )


@router.delete("/memories/{memory_id}", summary="Forget (long-term memory)")
def forget(ctx: Ctx, user_id: User, memory_id: str, agent: Agent = None) -> Memory:
    """Delete one memory for good (text, vector, old versions); returns what was forgotten."""
    request = agents.ForgetRequest(user=user_id, memory_id=memory_id, agent=agent)
    return agents.forget(ctx, request)


@router.post("/conversations/end", status_code=202, summary="End a conversation")
def end_conversation(state: State, ctx: Ctx, user_id: User, body: EndConversation) -> Job:
    """Merge the conversation into the user x agent session summary, in the background."""
    started: list[Job] = []

    def trigger(request: SessionMergeRequest) -> None:
        def work(_: object) -> SessionSummary | None:
            return agents.merge_conversation(ctx, request)

        as_data = request.model_dump(mode="json")
        started.append(start(state, ctx, "session-merge", work, 0, as_data))

    ended = agents.EndConversationRequest(
        user=user_id, agent=body.agent, conversation=body.conversation
    )
    agents.end_conversation(ctx, ended, trigger)
    return started[0]


@router.delete("", summary="Wipe a user (right to be forgotten)")
def wipe_user(ctx: Ctx, user_id: User) -> WipeReceipt:
    """Delete every trace of the user in every layer, for good; returns the receipt."""
    return agents.wipe_user(ctx, agents.WipeRequest(user=user_id))
