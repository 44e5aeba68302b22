"""Pre-load: the long-term memories most relevant to a user message, for the prompt.

Before each model call the agent recalls the user's memories closest to the new message
(those the agent may see), at most `max_memories`, and keeps them best first while the
rendered block stays within `token_budget` tokens (cl100k, `memory.providers.tokens`): a
memory that does not fit is left out and the next, shorter one may still fit. Each memory
keeps its provenance (id, type, scope, created_at, score).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from memory.agents import longterm
from memory.agents.memories import RecalledMemory
from memory.errors import InvalidInput
from memory.providers.tokens import count_tokens

if TYPE_CHECKING:
    from memory.context import Context

DEFAULT_MAX_MEMORIES = 50
"""The seed's default number of memories pulled in per turn."""
DEFAULT_TOKEN_BUDGET = 2000
HEADER = "Long-term memories of this user (most relevant first; cite an id to forget one):"


class Preload(BaseModel):
    """The memories pre-loaded for one user message, and what the budget left out."""

    model_config = ConfigDict(extra="forbid")

    memories: list[RecalledMemory]
    """Kept memories, best first."""
    tokens: int
    """Tokens of `text()` (0 when no memory was kept)."""
    token_budget: int
    max_memories: int
    left_out: int
    """Memories recalled but left out because they did not fit the budget."""

    def text(self) -> str:
        """Return the block handed to the model ("" when no memory was kept)."""
        return render(self.memories)


def memory_line(found: RecalledMemory) -> str:
    """Return one memory as a prompt line with its provenance."""
    memory = found.memory
    scope = "user-wide" if memory.scope == "user" else "this agent only"
    tags = f" #{' #'.join(memory.tags)}" if memory.tags else ""
    content = " ".join(memory.content.split())
    return (
        f"- [{memory.type}, {scope}] {content}{tags} "
        f"(id {memory.id}, saved {memory.created_at:%Y-%m-%d}, score {found.score:.2f})"
    )


def render(kept: list[RecalledMemory]) -> str:
    """Return the header and one line per memory ("" for none)."""
    if not kept:
        return ""
    return "\n".join([HEADER, *(memory_line(found) for found in kept)])


def preload(
    ctx: Context,
    *,
    user: str,
    agent: str | None,
    message: str,
    max_memories: int = DEFAULT_MAX_MEMORIES,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
) -> Preload:
    """Return the memories of `user` most relevant to `message`, within both caps.

    Args:
        ctx: the context.
        user: the user talking.
        agent: the agent answering (it sees the user-wide memories and its own).
        message: the user's new message (blank: nothing is recalled).
        max_memories: most memories kept, 0-`longterm.MAX_RECALL` (the agent's
            `long_term.max_memories`).
        token_budget: most tokens the rendered block may take (0: none kept).

    Raises:
        InvalidInput: a cap out of range, or a bad user or agent id.
    """
    if not 0 <= max_memories <= longterm.MAX_RECALL:
        raise InvalidInput(
            f"max_memories must be between 0 and {longterm.MAX_RECALL}, got {max_memories}"
        )
    if token_budget < 0:
        raise InvalidInput(f"token_budget must be 0 or more, got {token_budget}")
    found: list[RecalledMemory] = []
    if max_memories and token_budget and message.strip():
        found = longterm.recall(ctx, user=user, agent=agent, query=message, k=max_memories)
    kept = fit(found, token_budget)
    return Preload(
        memories=kept,
        tokens=count_tokens(render(kept)) if kept else 0,
        token_budget=token_budget,
        max_memories=max_memories,
        left_out=len(found) - len(kept),
    )


def fit(found: list[RecalledMemory], budget: int) -> list[RecalledMemory]:
    """Return the memories, best first, whose rendered block stays within `budget` tokens."""
    kept: list[RecalledMemory] = []
    used = count_tokens(HEADER + "\n")
    for item in found:
        cost = count_tokens(memory_line(item) + "\n")
        if used + cost <= budget:
            kept.append(item)
            used += cost
    while kept and count_tokens(render(kept)) > budget:  # pieces joined may count apart
        kept.pop()
    return kept
