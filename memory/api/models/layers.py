"""What the memory-layer routes (`/users/{user_id}/...`) take and answer: remember, recall,
end a conversation."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from memory.agents.memories import RecalledMemory
from memory.api.schemas import Request


class RememberRequest(Request):
    """A long-term memory to keep (`memory_remember`)."""

    content: str
    type: Literal["fact", "preference", "relationship", "instruction"] = "fact"
    tags: list[str] = Field(default_factory=list, description="short lowercase keywords")
    scope: Literal["user", "agent"] = Field(
        default="user", description="user: every agent of the user sees it; agent: only this one"
    )
    agent: str | None = Field(default=None, description="the agent saving it")


class RecallRequest(Request):
    """What to recall (`memory_recall`): the memories closest in meaning to `query`."""

    query: str
    k: int = Field(default=10, ge=1, le=1000)
    agent: str | None = None


class Recalled(BaseModel):
    """Recalled memories, best first."""

    data: list[RecalledMemory]


class EndConversation(Request):
    """The conversation that ended: its turns are merged into the user x agent summary."""

    agent: str
    conversation: str = Field(description="the conversation's working-memory key")
