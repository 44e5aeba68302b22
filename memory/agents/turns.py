"""Conversation turns with tool calls, grouped into units that are never split (pure).

Providers reject a tool result whose call is missing, and an assistant tool call whose
results are missing. So an assistant turn with `tool_calls` and the tool turns answering
each of its calls form one unit: kept verbatim together or summarized together. A unit
that cannot be sent as is (a tool result with no call before it, a call still waiting for a
result) is never sent as tool messages: it is summarized with the oldest turns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory.providers.tokens import count_tokens
from memory.providers.toolchat import ChatMessage, Role, ToolCall

__all__ = [
    "MESSAGE_OVERHEAD",
    "MIN_SUMMARY_TOKENS",
    "ContextPlan",
    "Role",
    "ToolCall",
    "Turn",
    "Unit",
    "group_units",
    "plan_context",
    "summary_budget_for",
    "turn_tokens",
]
MESSAGE_OVERHEAD = 4
"""Tokens a chat message costs beyond its text (role and separators), as providers count."""
TokenCounter = Callable[[str], int]


Turn = ChatMessage
"""One message of a conversation, as handed to a model: the one chat message model
(`memory.providers.toolchat.ChatMessage`), under the name working memory gives it."""


def turn_tokens(turn: Turn, counter: TokenCounter = count_tokens) -> int:
    """Return what a turn costs in a prompt: its text, its calls' JSON and the overhead."""
    calls = json.dumps([c.model_dump() for c in turn.tool_calls]) if turn.tool_calls else ""
    return counter(turn.content) + (counter(calls) if calls else 0) + MESSAGE_OVERHEAD


@dataclass(frozen=True)
class Unit:
    """Consecutive turns that are kept or summarized together (positions into the thread)."""

    positions: tuple[int, ...]
    tokens: int
    sendable: bool
    """False for an orphaned tool result or a call still missing a result: such a unit is
    only ever summarized, never sent as tool messages."""


def group_units(turns: Sequence[Turn], counter: TokenCounter = count_tokens) -> list[Unit]:
    """Return the thread's units, oldest first; every position is in exactly one unit."""
    units: list[Unit] = []
    index = 0
    while index < len(turns):
        turn = turns[index]
        if turn.role == "assistant" and turn.tool_calls:
            waiting = {call.id for call in turn.tool_calls}
            positions = [index]
            index += 1
            while index < len(turns) and waiting and turns[index].role == "tool":
                answer = turns[index].tool_call_id
                if answer not in waiting:
                    break
                waiting.discard(answer)
                positions.append(index)
                index += 1
            tokens = sum(turn_tokens(turns[p], counter) for p in positions)
            units.append(Unit(tuple(positions), tokens, sendable=not waiting))
            continue
        sendable = turn.role != "tool"  # a tool result here answers no call before it
        units.append(Unit((index,), turn_tokens(turn, counter), sendable=sendable))
        index += 1
    return units


@dataclass(frozen=True)
class ContextPlan:
    """Which turns go to the model verbatim and which are summarized first."""

    kept: tuple[int, ...]
    """Positions kept verbatim, oldest first (whole units only)."""
    summarized: tuple[int, ...]
    """Positions folded into the summary, oldest first (empty: no summary)."""
    summary_budget: int
    """Tokens the summary message may take (0 when nothing is summarized)."""
    over_budget: bool
    """True only when the newest unit alone does not fit in `max_tokens`: it is kept whole
    anyway (a model must see the latest turn), so the context is over budget."""


MIN_SUMMARY_TOKENS = 32
"""The smallest summary message a context carries when older turns are summarized."""


def summary_budget_for(max_tokens: int) -> int:
    """Return the tokens a working-memory summary gets: a quarter of the budget."""
    return max(MIN_SUMMARY_TOKENS, max_tokens // 4)


def plan_context(units: Sequence[Unit], max_tokens: int) -> ContextPlan:
    """Return what to keep and summarize so the context fits `max_tokens` (pure).

    Everything is kept when every unit is sendable and the total fits. Otherwise a summary
    budget is reserved and the newest sendable units are kept, newest first, while they fit
    in the rest; older units and unsendable ones are summarized, and the summary gets what
    the kept units leave (at most a quarter of the budget, at least MIN_SUMMARY_TOKENS).
    The newest sendable unit is always kept whole, even when it does not fit: the one case
    the context is over budget (see `ContextPlan.over_budget`).
    """
    total = sum(u.tokens for u in units)
    if total <= max_tokens and all(u.sendable for u in units):
        return ContextPlan(tuple(p for u in units for p in u.positions), (), 0, False)
    room = max_tokens - summary_budget_for(max_tokens)
    kept: set[int] = set()
    used = 0
    for unit in reversed(units):
        if not unit.sendable:
            continue
        if kept and used + unit.tokens > room:
            break
        kept.update(unit.positions)
        used += unit.tokens
    summarized = tuple(p for u in units for p in u.positions if p not in kept)
    if not summarized:
        return ContextPlan(tuple(sorted(kept)), (), 0, used > max_tokens)
    budget = max(MIN_SUMMARY_TOKENS, min(summary_budget_for(max_tokens), max_tokens - used))
    return ContextPlan(tuple(sorted(kept)), summarized, budget, used + budget > max_tokens)
