"""Working memory: the current conversation's turns, handed to the model within `max_tokens`.

Turns live in the account's `working-memory` conversation bank, keyed by conversation, each
tagged with its user (and agent) (`identity`), so ownership and the wipe select by filter.
`context` returns the messages to send: every turn when they fit; otherwise the oldest
turns are summarized with the compaction summarizer (`memory.compaction.summarizer`,
strategy `summarize`) and the newest kept verbatim. A tool call and its results are one
unit (`turns`): never split, never orphaned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from memory import entries
from memory.agents import identity
from memory.agents import key_templates as keys
from memory.agents.receipt import TableWipe, wipe_rows
from memory.agents.registry import MAX_AGENT_ID, WORKING_BANK, Agent
from memory.agents.storage import append, existing_bank, layer_bank, rows
from memory.agents.turns import (
    MESSAGE_OVERHEAD,
    ToolCall,
    Turn,
    group_units,
    plan_context,
    turn_tokens,
)
from memory.compaction.plan import SUMMARY_SLACK
from memory.compaction.summarizer import completer_for, summarize, summarizer_label
from memory.errors import Conflict, InvalidInput
from memory.models import Bank, Entry, EntryIn
from memory.ports import Completer
from memory.providers.tokens import count_tokens, truncate
from memory.types.entry_filter import EntryFilter
from memory.validation import check_label

if TYPE_CHECKING:
    from memory.context import Context

SUMMARY_PREFIX = "Summary of the earlier part of this conversation:\n"
SYSTEM_SPEAKER = "system"
MIN_ASKED_TOKENS = 24
"""The smallest budget a summary is asked for; its text is then cut to what fits."""


class StoredTurn(BaseModel):
    """A turn as stored in working memory: the message plus who and when."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    conversation: str
    user: str
    agent: str | None
    turn: Turn


class WorkingContext(BaseModel):
    """What to hand the model for one conversation, and how it was made to fit."""

    model_config = ConfigDict(extra="forbid")

    conversation: str
    messages: list[Turn]
    """The summary (a system message, when older turns were summarized), then the kept
    turns verbatim, oldest first."""
    summary: str | None = None
    summarized_ids: list[str] = Field(default_factory=list)
    """Ids of the turns folded into the summary, oldest first."""
    kept_ids: list[str] = Field(default_factory=list)
    """Ids of the turns sent verbatim, oldest first."""
    tokens: int
    """What `messages` cost (`turns.turn_tokens` summed)."""
    max_tokens: int
    over_budget: bool = False
    """True only when the newest turn (with its tool calls and results) alone does not fit:
    it is sent whole anyway, so `tokens > max_tokens`."""
    summarizer: str | None = None
    """Label of what wrote the summary (the offline extractive summarizer says so)."""


def conversation_key(
    agent: Agent, *, conversation: str, user: str, metadata: Mapping[str, Any] | None = None
) -> str:
    """Return the working-memory key of a conversation from the agent's `conversation_key`.

    Raises:
        InvalidInput: the template needs a value the conversation lacks, or keys by
            `metadata.email_from` while the agent's `email_require_sender_auth` is off.
    """
    return keys.render(
        agent.conversation_key,
        conversation=conversation,
        user=user,
        agent=agent.id,
        metadata=metadata,
        require_sender_auth=agent.email_require_sender_auth,
        source=f"agent {agent.id}: conversation_key",
    )


def working_bank(ctx: Context) -> Bank:
    """Return the account's working-memory bank (made on first use)."""
    return layer_bank(ctx, WORKING_BANK)


def add_turns(
    ctx: Context, conversation: str, turns: Sequence[Turn], *, user: str, agent: str | None = None
) -> list[StoredTurn]:
    """Store turns of a conversation in one write (an assistant call and its results together).

    Raises:
        InvalidInput: a bad user, agent or conversation key, or a turn the bank refuses.
        Conflict: the conversation belongs to another user.
    """
    check_label("user", user, MAX_AGENT_ID)
    if agent is not None:
        check_label("agent", agent, MAX_AGENT_ID)
    bank = working_bank(ctx)
    if any(owner != user for owner in _owners(ctx, bank, conversation)):
        raise Conflict(
            f"conversation {conversation!r} belongs to another user: give this user's "
            "conversation its own id"
        )
    items = [_entry_in(conversation, turn, user=user, agent=agent) for turn in turns]
    written = append(ctx, bank, items)
    return [_stored(entry) for entry in written]


def add_turn(
    ctx: Context, conversation: str, turn: Turn, *, user: str, agent: str | None = None
) -> StoredTurn:
    """Store one turn of a conversation; see `add_turns`."""
    return add_turns(ctx, conversation, [turn], user=user, agent=agent)[0]


def _owners(ctx: Context, bank: Bank, conversation: str) -> set[str]:
    """Return the users whose turns the conversation holds (its compaction summaries, which
    record no user, do not count)."""
    return {_user(e) for e in rows(ctx, bank, EntryFilter(keys=(conversation,), kind="entry"))}


def _user(entry: Entry) -> str:
    """Return who a stored turn belongs to (from its metadata, which every turn records)."""
    return str(entry.metadata.get("user", ""))


def _entry_in(conversation: str, turn: Turn, *, user: str, agent: str | None) -> EntryIn:
    speaker = {"user": user, "assistant": agent or "assistant", "tool": turn.name or "tool"}
    metadata: dict[str, Any] = {"user": user, "agent": agent}
    if turn.tool_calls:
        metadata["tool_calls"] = [call.model_dump() for call in turn.tool_calls]
    if turn.tool_call_id is not None:
        metadata["tool_call_id"] = turn.tool_call_id
    if turn.name is not None:
        metadata["name"] = turn.name
    if not turn.content.strip():
        metadata["blank"] = True  # an assistant turn that only calls tools
    return EntryIn(
        key=conversation,
        tags=identity.identity_tags(user, agent),
        speaker=speaker.get(turn.role, SYSTEM_SPEAKER),
        role=turn.role,
        content=turn.content if turn.content.strip() else turn.text(),
        metadata=metadata,
    )


def _stored(entry: Entry) -> StoredTurn:
    meta = entry.metadata
    turn = Turn(
        role=entry.role if entry.role in ("system", "user", "assistant", "tool") else "system",
        content="" if meta.get("blank") else entry.content,
        tool_calls=[ToolCall.model_validate(c) for c in meta.get("tool_calls", [])],
        tool_call_id=meta.get("tool_call_id"),
        name=meta.get("name"),
    )
    return StoredTurn(
        id=entry.id,
        conversation=entry.key,
        user=str(meta.get("user", "")),
        agent=meta.get("agent"),
        turn=turn,
    )


def turns(ctx: Context, conversation: str) -> list[StoredTurn]:
    """Return the conversation's stored turns, oldest first (none for an unknown one).

    A compaction summary of the conversation (a bank compacted before layer banks refused
    thresholds) comes back as a system turn where it stands, attributed to the owner.
    """
    bank = existing_bank(ctx, WORKING_BANK)
    if bank is None:
        return []
    found = entries.load(ctx, bank, conversation)
    owner = next((_user(e) for e in found if e.kind == "entry"), "")
    return [_stored(e) if e.kind == "entry" else _summary_turn(e, owner) for e in found]


def _summary_turn(entry: Entry, owner: str) -> StoredTurn:
    turn = Turn(role="system", content=SUMMARY_PREFIX + entry.content)
    return StoredTurn(id=entry.id, conversation=entry.key, user=owner, agent=None, turn=turn)


def context(
    ctx: Context, conversation: str, *, max_tokens: int, completer: Completer | None = None
) -> WorkingContext:
    """Return the messages to hand the model for `conversation`, within `max_tokens`.

    Args:
        ctx: The context (store; its completer summarizes, unless `completer` is given).
        conversation: The conversation's key.
        max_tokens: The budget (the agent's working-memory `max_tokens`).
        completer: Summarizes the oldest turns (default: the context's, from settings).

    Raises:
        InvalidInput: `max_tokens` is under 1.
        ProviderError: the summarizer failed (nothing is stored, so nothing is lost).
    """
    if max_tokens < 1:
        raise InvalidInput(f"max_tokens must be at least 1, got {max_tokens}")
    bank = existing_bank(ctx, WORKING_BANK)
    if bank is None:  # a read makes no bank: nothing was said yet
        return WorkingContext(
            conversation=conversation, messages=[], tokens=0, max_tokens=max_tokens
        )
    return build_context(
        conversation,
        turns(ctx, conversation),
        max_tokens=max_tokens,
        completer=completer or completer_for(ctx),
        bank=bank,
    )


def build_context(
    conversation: str,
    stored: Sequence[StoredTurn],
    *,
    max_tokens: int,
    completer: Completer,
    bank: Bank,
) -> WorkingContext:
    """Return the context of `stored` turns within `max_tokens` (no storage: the core)."""
    thread = [s.turn for s in stored]
    plan = plan_context(group_units(thread), max_tokens)
    kept = [stored[p] for p in plan.kept]
    summary: str | None = None
    messages = [s.turn for s in kept]
    label: str | None = None
    if plan.summarized:
        covered = [stored[p] for p in plan.summarized]
        summary = _summary(completer, bank, covered, plan.summary_budget)
        messages = [Turn(role="system", content=summary), *messages]
        label = summarizer_label(completer.model)
    tokens = sum(turn_tokens(m) for m in messages)
    return WorkingContext(
        conversation=conversation,
        messages=messages,
        summary=summary,
        summarized_ids=[stored[p].id for p in plan.summarized],
        kept_ids=[s.id for s in kept],
        tokens=tokens,
        max_tokens=max_tokens,
        over_budget=plan.over_budget,
        summarizer=label,
    )


def _summary(completer: Completer, bank: Bank, covered: Sequence[StoredTurn], budget: int) -> str:
    """Return the summary message text of `covered`, cut to fit `budget` tokens."""
    from memory.prompts import template

    text_budget = max(1, budget - MESSAGE_OVERHEAD - count_tokens(SUMMARY_PREFIX))
    as_entries = [
        Entry(
            id=s.id,
            bank_id=bank.id,
            key=s.conversation,
            content=s.turn.prose(),
            speaker=s.user if s.turn.role == "user" else (s.turn.name or s.agent or s.turn.role),
            role=s.turn.role,
            created_at=bank.created_at,
            token_count=0,
        )
        for s in covered
    ]
    instructions = bank.model_copy(update={"compaction_prompt": template("working_summary")})
    asked = max(MIN_ASKED_TOKENS, text_budget)  # a tiny budget would refuse any summary
    text = summarize(completer, instructions, as_entries, asked, slack=SUMMARY_SLACK)
    return SUMMARY_PREFIX + truncate(text, text_budget)


def wipe_user(ctx: Context, user: str, *, legacy: bool = True) -> list[TableWipe]:
    """Delete every turn (and compaction summary) of `user`'s conversations, for good.

    The conversations are found by the user's tag; with `legacy`, also by the metadata of
    rows written before identity tags existed (a read of every row: needed only until
    `membank maintain` tagged them).

    Returns:
        One receipt line for the working-memory bank (none when the account has none).
    """
    bank = existing_bank(ctx, WORKING_BANK)
    if bank is None:
        return []
    theirs = {e.key for e in rows(ctx, bank, identity.rows_of_user(user))}
    if legacy:
        theirs |= {e.key for e in identity.legacy_rows_of(rows(ctx, bank, EntryFilter()), user)}
    return wipe_rows(ctx, bank, "working", EntryFilter(keys=tuple(sorted(theirs))))
