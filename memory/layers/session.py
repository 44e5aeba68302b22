"""Session memory: one rolling summary per user x agent, merged when a conversation ends.

`end_conversation` returns at once: it hands a `SessionMergeRequest` to a trigger (the
Prefect deployment `membank-session-merge`, from `flows.session_merge`; memory/ never
imports Prefect). The flow calls `merge_conversation`, which merges the conversation's
working-memory turns into the summary (`merge.merge_session`) and stores it in the account's
`session-memory` bank. The next conversation of that user with that agent starts with it
(`start_conversation`).

Merges of one user are serialized by the user's lock (across processes on a local store),
and a summary records the ids of every message it covers: two conversations ending at once
are both merged, and a conversation ended twice (or a retried run) is merged once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from memory import entries, purge
from memory.compaction.summarizer import completer_for, summarizer_label
from memory.errors import StorageError
from memory.layers import working
from memory.layers.agents import MAX_AGENT_ID, SESSION_BANK
from memory.layers.merge import RunningSummary, SessionMessage, merge_session
from memory.layers.receipt import TableWipe, wipe_rows
from memory.layers.storage import existing_bank, layer_bank
from memory.layers.turns import Turn
from memory.models import Bank, Entry, EntryIn
from memory.ports import Completer
from memory.store import filters
from memory.store.locks import partition_lock
from memory.validation import check_label

if TYPE_CHECKING:
    from memory.context import Context

DEFAULT_SUMMARY_TOKENS = 800
"""The most tokens a session summary takes (it is loaded into every next conversation)."""
SUMMARY_INTRO = "What you know from earlier conversations with this user:\n"


class SessionMergeRequest(BaseModel):
    """What an ended conversation asks the session-merge flow to do."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    account: str
    user: str
    agent: str
    conversation: str
    """The conversation's working-memory key."""


class SessionMergeTrigger(Protocol):
    """Starts a session merge without waiting for it (the Prefect deployment, or inline)."""

    def __call__(self, request: SessionMergeRequest) -> None:
        """Start the merge of `request`; return as soon as it is scheduled."""
        ...


class SessionSummary(BaseModel):
    """The rolling summary of one user x agent."""

    model_config = ConfigDict(extra="forbid")

    id: str
    user: str
    agent: str
    summary: str
    version: int
    """1 for the first merge, one more at each merge that added something."""
    conversations: list[str] = Field(default_factory=list)
    """The conversations merged in, in merge order, each once."""
    covered_message_ids: list[str] = Field(default_factory=list)
    summarizer: str = ""
    """What wrote the summary, e.g. `membank/extractive: extractive summarizer (offline)`."""
    updated_at: datetime


def pair_key(user: str, agent: str) -> str:
    """Return the session bank's key of a user x agent (unambiguous for any ids)."""
    return json.dumps([user, agent], ensure_ascii=False)


def _check_ids(user: str, agent: str) -> None:
    check_label("user", user, MAX_AGENT_ID)
    check_label("agent", agent, MAX_AGENT_ID)


def session_bank(ctx: Context) -> Bank:
    """Return the account's session-memory bank (made on first use)."""
    return layer_bank(
        ctx, SESSION_BANK, "general", "Session memory: one rolling summary per user x agent."
    )


def _records(ctx: Context, bank: Bank, user: str, agent: str) -> list[SessionSummary]:
    found = entries.read(ctx, bank, filters.equals("key", pair_key(user, agent)))
    return sorted((_summary_of(e) for e in found), key=lambda s: s.version)


def _summary_of(entry: Entry) -> SessionSummary:
    meta: dict[str, Any] = entry.metadata
    return SessionSummary(
        id=entry.id,
        user=meta["user"],
        agent=meta["agent"],
        summary=entry.content,
        version=meta["version"],
        conversations=meta.get("conversations", []),
        covered_message_ids=meta.get("covered", []),
        summarizer=meta.get("summarizer", ""),
        updated_at=entry.created_at,
    )


def session_summary(ctx: Context, user: str, agent: str) -> SessionSummary | None:
    """Return the rolling summary of `user` with `agent`, or None before the first merge."""
    _check_ids(user, agent)
    bank = existing_bank(ctx, SESSION_BANK)
    found = _records(ctx, bank, user, agent) if bank is not None else []
    return found[-1] if found else None


def start_conversation(ctx: Context, *, user: str, agent: str) -> list[Turn]:
    """Return the messages a new conversation of `user` with `agent` starts with: the
    session summary as a system message, or nothing before the first merge."""
    found = session_summary(ctx, user, agent)
    return [] if found is None else [Turn(role="system", content=SUMMARY_INTRO + found.summary)]


def end_conversation(
    ctx: Context, *, user: str, agent: str, conversation: str, trigger: SessionMergeTrigger
) -> None:
    """Ask for the conversation to be merged into the session summary; returns at once.

    Raises:
        InvalidInput: a bad user, agent or conversation id (nothing is triggered).
    """
    _check_ids(user, agent)
    check_label("conversation", conversation, 512)
    trigger(
        SessionMergeRequest(account=ctx.account, user=user, agent=agent, conversation=conversation)
    )


def inline_trigger(ctx: Context) -> SessionMergeTrigger:
    """Return a trigger that merges at once in this process (tests, offline scripts)."""

    def run(request: SessionMergeRequest) -> None:
        merge_conversation(
            ctx, user=request.user, agent=request.agent, conversation=request.conversation
        )

    return run


def merge_conversation(
    ctx: Context,
    *,
    user: str,
    agent: str,
    conversation: str,
    completer: Completer | None = None,
    max_tokens: int = DEFAULT_SUMMARY_TOKENS,
    wait: float | None = None,
) -> SessionSummary | None:
    """Merge the user's turns of `conversation` into the user x agent summary; returns it.

    Args:
        ctx: The context (store; its completer writes the summary unless `completer`).
        user: The user's id.
        agent: The agent's id.
        conversation: The conversation's working-memory key.
        completer: Writes the summary (default: the context's, from settings).
        max_tokens: The most tokens the summary may take.
        wait: Seconds to wait for another merge of this user (None: as long as it takes).

    Returns:
        The summary after the merge (unchanged when every turn was merged already; None
        when there was nothing to merge and no summary yet).

    Raises:
        ProviderError: the summarizer failed; nothing changed, a retry merges it.
        StorageError: `wait` passed while another merge of this user ran.
    """
    _check_ids(user, agent)
    bank = session_bank(ctx)
    with partition_lock(ctx.store.uri, bank.id, user, timeout=wait) as held:
        if not held:
            raise StorageError(f"another session merge of user {user!r} holds its lock")
        # read under the lock: a wipe of this user waits for it, and one done before finds
        # no turns here, so no summary of a wiped user is written after the wipe
        messages = [
            SessionMessage(id=t.id, speaker=_speaker(t), content=_said(t))
            for t in working.turns(ctx, conversation)
            if t.user == user
        ]
        return _merge_locked(ctx, bank, user, agent, conversation, messages, completer, max_tokens)


def _said(stored: working.StoredTurn) -> str:
    """Return what a turn tells the session summary: nothing for a tool's result (an id or
    raw output; the call before it says what was done)."""
    return "" if stored.turn.role == "tool" else stored.turn.text()


def _speaker(stored: working.StoredTurn) -> str:
    if stored.turn.role == "user":
        return stored.user
    return stored.turn.name or stored.agent or stored.turn.role


def _merge_locked(
    ctx: Context,
    bank: Bank,
    user: str,
    agent: str,
    conversation: str,
    messages: Sequence[SessionMessage],
    completer: Completer | None,
    max_tokens: int,
) -> SessionSummary | None:
    from memory.prompts import template

    earlier = _records(ctx, bank, user, agent)
    current = earlier[-1] if earlier else None
    running = (
        RunningSummary(current.summary, frozenset(current.covered_message_ids)) if current else None
    )
    writer = completer or completer_for(ctx)
    result = merge_session(
        messages,
        running_summary=running,
        completer=writer,
        max_tokens=max_tokens,
        instructions=template("session_merge"),
    )
    if not result.merged_message_ids:
        return current
    conversations = list(current.conversations) if current else []
    if conversation not in conversations:
        conversations.append(conversation)
    covered = [*(current.covered_message_ids if current else []), *result.merged_message_ids]
    metadata = {
        "user": user,
        "agent": agent,
        "version": (current.version if current else 0) + 1,
        "conversations": conversations,
        "covered": covered,
        "summarizer": summarizer_label(writer.model),
    }
    item = EntryIn(key=pair_key(user, agent), content=result.summary, metadata=metadata)
    [written] = entries.write(ctx, bank, [item])
    if earlier:  # the new version is stored first: a crash here leaves it winning
        ids = [s.id for s in earlier]
        purge.delete_for_good(ctx, bank, filters.one_of("entry_id", ids))
    return _summary_of(written)


def wipe_user(ctx: Context, user: str) -> list[TableWipe]:
    """Delete every session summary of `user` (with any agent), for good.

    Runs under the user's merge lock, so a merge in flight finishes first and one after
    finds no turns left to merge once working memory is wiped too (wipe it first).
    """
    bank = existing_bank(ctx, SESSION_BANK)
    if bank is None:
        return []
    with partition_lock(ctx.store.uri, bank.id, user, timeout=None):
        rows = ctx.store.scan(
            bank.id, columns=["entry_id", "metadata"], where="chunk_index = 0"
        ).to_pylist()
        doomed = [r["entry_id"] for r in rows if json.loads(r["metadata"]).get("user") == user]
        where = filters.one_of("entry_id", doomed) if doomed else None
        return wipe_rows(ctx, bank, "session", where)
