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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from memory import purge
from memory.agents import identity, working
from memory.agents.receipt import TableWipe, wipe_rows
from memory.agents.registry import MAX_AGENT_ID, SESSION_BANK
from memory.agents.session_merge import RunningSummary, SessionMessage, merge_session
from memory.agents.storage import append, existing_bank, layer_bank, rows
from memory.agents.turns import Turn
from memory.compaction.summarizer import completer_for, summarizer_label
from memory.errors import StorageError
from memory.models import Bank, Entry, EntryIn
from memory.ports import Completer
from memory.types.entry_filter import EntryFilter
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
    max_tokens: int = DEFAULT_SUMMARY_TOKENS
    """The most tokens the merged summary may take."""


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
    return layer_bank(ctx, SESSION_BANK)


def _records(ctx: Context, bank: Bank, user: str, agent: str) -> list[SessionSummary]:
    found = rows(ctx, bank, EntryFilter.key(pair_key(user, agent)))
    return sorted((_summary_of(e) for e in found), key=lambda s: (s.version, s.updated_at))


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


def summaries(ctx: Context, user: str, agent: str) -> list[SessionSummary]:
    """Return every live summary of `user` with `agent`, oldest version first: one, except
    after a merge interrupted between storing the new one and deleting the old (the next
    merge, or `membank maintain`, keeps the newest)."""
    _check_ids(user, agent)
    bank = existing_bank(ctx, SESSION_BANK)
    return _records(ctx, bank, user, agent) if bank is not None else []


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
    with user_lock(ctx, user, timeout=wait) as held:
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
    raw output; the call before it says what was done), and a tool call as `name: value`
    phrases (`ChatMessage.prose`), never JSON a cut at the budget could leave open."""
    return "" if stored.turn.role == "tool" else stored.turn.prose()


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
        _keep_newest(ctx, bank, earlier)  # finish a merge killed before its delete
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
    item = EntryIn(
        key=pair_key(user, agent),
        content=result.summary,
        tags=identity.identity_tags(user, agent),
        metadata=metadata,
    )
    [written] = append(ctx, bank, [item])
    # the new version is stored first: a crash here leaves it winning, and the next merge
    # (or `membank maintain`) deletes the older ones
    _delete(ctx, bank, earlier)
    return _summary_of(written)


def _keep_newest(ctx: Context, bank: Bank, found: Sequence[SessionSummary]) -> None:
    _delete(ctx, bank, found[:-1])


def _delete(ctx: Context, bank: Bank, found: Sequence[SessionSummary]) -> None:
    if found:
        purge.delete_final(ctx, bank, EntryFilter.of_ids([s.id for s in found]))


def duplicate_problems(ctx: Context, bank: Bank) -> list[str]:
    """Return one line per user x agent with more than one live summary (`verify`)."""
    counts: dict[str, int] = {}
    for entry in rows(ctx, bank, EntryFilter()):
        counts[entry.key] = counts.get(entry.key, 0) + 1
    return [
        f"{n} live session summaries of user x agent {key} (a merge was interrupted): "
        "`membank maintain` keeps the newest"
        for key, n in sorted(counts.items())
        if n > 1
    ]


def repair_duplicates(ctx: Context, bank: Bank) -> list[str]:
    """Keep the newest summary of each user x agent; returns what was wrong (`maintain`)."""
    wrong = duplicate_problems(ctx, bank)
    if wrong:
        by_key: dict[str, list[SessionSummary]] = {}
        for entry in rows(ctx, bank, EntryFilter()):
            by_key.setdefault(entry.key, []).append(_summary_of(entry))
        for found in by_key.values():
            _keep_newest(ctx, bank, sorted(found, key=lambda s: (s.version, s.updated_at)))
    return wrong


def wipe_user(ctx: Context, user: str, *, legacy: bool = True) -> list[TableWipe]:
    """Delete every session summary of `user` (with any agent), for good: one filtered
    final deletion by the user's tag; with `legacy`, also the summaries written before
    identity tags existed (a read of every row: needed only until `membank maintain`
    tagged them).

    `memory.agents.wipe` runs it under the user's lock (`user_lock`), with the other layers.
    """
    bank = existing_bank(ctx, SESSION_BANK)
    if bank is None:
        return []
    which = identity.rows_of_user(user)
    if legacy:
        old = identity.legacy_rows_of(rows(ctx, bank, EntryFilter()), user)
        which = EntryFilter(any_of=(which, EntryFilter.of_ids([e.id for e in old])))
    return wipe_rows(ctx, bank, "session", which)


@contextmanager
def user_lock(ctx: Context, user: str, *, timeout: float | None) -> Iterator[bool]:
    """Hold `user`'s agent-memory lock (merges and the wipe take it); yields False when not
    acquired within `timeout` (None: wait as long as it takes)."""
    scope = f"agent-layers:{ctx.account}"
    with ctx.store.partition_lock(scope, user, timeout=timeout) as held:
        yield held
