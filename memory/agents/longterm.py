"""Long-term memory: remember, recall and forget a user's memories; the layer's per-user wipe.

Memories live in one general bank per account, `long-term-memory` (made on the first
remember, mode `fast`, kept indefinitely, never compacted), so load, stats, export,
retention, verify and maintain all work on it like on any bank. Each memory is one entry:
key = the user id, `memory_type` = its type, its tags, and in metadata the agent that saved
it and its scope. Visibility is one stored tag the recall filter tests: `scope:user` for
user-wide memories, `agent:<hash of the agent id>` for an agent's own (user tags cannot hold
a colon, so no user tag is mistaken for one). Recall is a vector search prefiltered on the
user's key and the visibility tags: it never reads another user's rows.

`agent=None` in recall and forget is the user's own view (the CLI, an administrator): every
memory of the user, whichever agent saved it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory import banks, entries
from memory.agents.identity import agent_tag, is_identity_tag
from memory.agents.memories import (
    Memory,
    RecalledMemory,
    Scope,
    check_agent,
    check_scope,
    check_type,
    check_user,
    normalise_tags,
)
from memory.agents.receipt import TableWipe, wipe_rows
from memory.agents.storage import (
    LAYER_BANKS,
    LONG_TERM_BANK,
    append,
    existing_bank,
    layer_bank,
    rows,
)
from memory.config import get_mode
from memory.errors import InvalidInput, NotFound
from memory.models import Bank, Entry, EntryIn
from memory.providers.tokens import count_tokens
from memory.search_scores import best_per_entry
from memory.types.entry_filter import EntryFilter
from memory.types.pages import PageAfter
from memory.validation import check_text

if TYPE_CHECKING:
    from memory.context import Context

__all__ = ["LONG_TERM_BANK"]

BANK_MODE = LAYER_BANKS[LONG_TERM_BANK].mode
"""The bank's mode: its chunk size (256 tokens) is the largest memory, so one memory is one
chunk and one vector."""
MAX_RECALL = 1000
"""Most memories one recall returns (the most an agent's `max_memories` may pre-load)."""
USER_WIDE = "scope:user"
"""Stored tag of a user-wide memory (the visibility filter tests it)."""


def memory_bank(ctx: Context, *, create: bool = False) -> Bank | None:
    """Return the account's long-term memory bank (made when `create`; else None if none).

    Raises:
        InvalidInput: a bank of that name exists but is not a general bank.
    """
    if not create:
        return existing_bank(ctx, LONG_TERM_BANK, LAYER_BANKS[LONG_TERM_BANK].type)
    return layer_bank(ctx, LONG_TERM_BANK)


def remember(
    ctx: Context,
    *,
    user: str,
    content: str,
    agent: str | None = None,
    type: str = "fact",  # noqa: A002 - the seed's and the tools' name, agreed with callers
    tags: Sequence[str] = (),
    scope: str = "user",
) -> Memory:
    """Store a memory of `user` (the same text with the same visibility is stored once).

    Args:
        ctx: the context (store, account, embedder).
        user: whose memory it is.
        content: the memory, one fact or preference (at most one chunk: 256 tokens).
        agent: the agent saving it (None: no agent; scope must then be `user`).
        type: fact, preference, relationship or instruction.
        tags: short keywords, normalised (see `memory.agents.memories`).
        scope: `user` (every agent of the user sees it) or `agent` (only `agent`).

    Returns:
        The stored memory (or the one already stored with that text and visibility).

    Raises:
        InvalidInput: any argument breaks its rule; nothing is stored.
    """
    item = memory_entry(user, content, agent=agent, type=type, tags=tags, scope=scope)
    marker = item.tags[-1]
    bank = memory_bank(ctx, create=True)
    assert bank is not None  # made when missing
    same = rows(ctx, bank, EntryFilter(keys=(user,), tags=(marker,), content=content))
    if same:
        return as_memory(same[0])
    (entry,) = append(ctx, bank, [item])
    return as_memory(entry)


def memory_entry(
    user: str,
    content: str,
    *,
    agent: str | None = None,
    type: str = "fact",  # noqa: A002 - as in remember
    tags: Sequence[str] = (),
    scope: str = "user",
    stored_tags: Sequence[str] = (),
    metadata: Mapping[str, Any] | None = None,
) -> EntryIn:
    """Return the entry that holds a memory of `user`, checked by remember's rules: key =
    the user, its type and normalised tags, then `stored_tags` (kept as given: each holds a
    `:`, so none is shown as a memory tag) and last its visibility tag; the agent and scope
    in metadata, with `metadata`'s fields (e.g. the LangGraph store's item) beside them.

    Raises:
        InvalidInput: any argument breaks its rule (see `remember`).
    """
    check_user(user)
    check_agent(agent)
    kind = check_type(type)
    where = check_scope(scope, agent)
    words = normalise_tags(tags)
    _check_content(content)
    shown = [tag for tag in stored_tags if not is_identity_tag(tag)]
    if shown:
        raise InvalidInput(f"stored tag {shown[0]!r} has no ':' (it would show as a memory tag)")
    marker = USER_WIDE if where == "user" else agent_tag(agent or "")
    return EntryIn(
        key=user,
        content=content,
        memory_type=kind,
        tags=[*words, *stored_tags, marker],
        metadata={**(metadata or {}), "agent": agent, "scope": where},
    )


def _check_content(content: str) -> None:
    check_text("memory content", content)
    if not content.strip():
        raise InvalidInput("memory content is empty: say what to remember")
    limit = get_mode(BANK_MODE).chunk_size
    tokens = count_tokens(content)
    if tokens > limit:
        raise InvalidInput(
            f"memory content is {tokens} tokens, over the {limit}-token limit of one memory: "
            "store one fact per memory (split it)"
        )


def recall(
    ctx: Context, *, user: str, query: str, agent: str | None = None, k: int = 10
) -> list[RecalledMemory]:
    """Return the `k` memories of `user` closest in meaning to `query`, best first.

    Only memories `agent` may see are searched: the user-wide ones and its own
    (`agent=None`: every memory of the user).

    Raises:
        InvalidInput: an empty query, k out of 1-`MAX_RECALL`, a bad user or agent id.
    """
    check_user(user)
    check_agent(agent)
    check_text("query", query)
    if not query.strip():
        raise InvalidInput("recall query is empty: say what to look for")
    if not 1 <= k <= MAX_RECALL:
        raise InvalidInput(f"k must be between 1 and {MAX_RECALL}, got {k}")
    bank = memory_bank(ctx)
    if bank is None:
        return []
    vector = ctx.embedder(banks.mode_of(bank)).embed([query])[0]
    found = ctx.store.search_chunks(
        bank.id, method="vector", vector=vector, text=None, flt=visible(user, agent), limit=k
    ).to_pylist()
    return [
        RecalledMemory(memory=as_memory(Entry.from_fields(bank.id, row)), score=row["_score"])
        for row in best_per_entry(found)[:k]
    ]


def memories(ctx: Context, *, user: str, agent: str | None = None) -> list[Memory]:
    """Return every memory of `user` that `agent` may see (None: all of them), oldest first."""
    check_user(user)
    check_agent(agent)
    bank = memory_bank(ctx)
    if bank is None:
        return []
    return [as_memory(entry) for entry in rows(ctx, bank, visible(user, agent))]


@dataclass(frozen=True)
class MemoryPage:
    """One page of a user's memories, oldest first, with the total and the next page's start."""

    memories: list[Memory]
    total: int
    next_after: PageAfter | None
    """Where the next page starts (None: this is the last page)."""


def memory_page(
    ctx: Context,
    *,
    user: str,
    agent: str | None = None,
    limit: int = 100,
    offset: int = 0,
    after: PageAfter | None = None,
) -> MemoryPage:
    """Return `limit` memories of `user` that `agent` may see, oldest first, after `after` (a
    cursor) or from `offset`; read in storage at the cost of the page, not of the user's
    every memory (`LanceStore.entry_page`)."""
    check_user(user)
    check_agent(agent)
    bank = memory_bank(ctx)
    if bank is None:
        return MemoryPage([], 0, None)
    found = ctx.store.entry_page(
        bank.id, visible(user, agent), limit=limit, offset=offset, after=after
    )
    return MemoryPage([as_memory(entry) for entry in found.entries], found.total, found.next_after)


def forget(ctx: Context, *, user: str, memory_id: str, agent: str | None = None) -> Memory:
    """Delete one memory of `user` for good (text, vector, old table versions).

    Args:
        ctx: the context.
        user: whose memory it is.
        memory_id: the memory's id (as remember and recall return it).
        agent: the agent asking: it can forget only memories it can see (None: any).

    Returns:
        The forgotten memory.

    Raises:
        NotFound: no such memory of this user visible to `agent`.
        PrunePending: deleted, but the prune is due (`membank maintain` finishes it).
    """
    check_user(user)
    check_agent(agent)
    check_text("memory id", memory_id)
    bank = memory_bank(ctx)
    which = visible(user, agent).and_(ids=(memory_id,))
    found = [] if bank is None else rows(ctx, bank, which)
    if bank is None or not found:
        raise NotFound(
            f"no memory {memory_id!r} of user {user!r}"
            + (f" visible to agent {agent!r}" if agent else "")
            + ": recall the user's memories to find its id"
        )
    entries.forget(ctx, bank, memory_id)
    return as_memory(found[0])


def wipe_user(ctx: Context, user: str, *, legacy: bool = True) -> list[TableWipe]:
    """Delete every long-term memory of `user` for good (one filtered final deletion by the
    user's key, which every memory has had: `legacy` changes nothing); returns the table's
    receipt line."""
    check_user(user)
    bank = memory_bank(ctx)
    if bank is None:
        return []
    del legacy
    return wipe_rows(ctx, bank, "long_term", EntryFilter.key(user))


def visible(user: str, agent: str | None) -> EntryFilter:
    """Return the filter of the memories of `user` that `agent` may see (None: all)."""
    seen_by = () if agent is None else (USER_WIDE, agent_tag(agent))
    return EntryFilter(keys=(user,), any_tag=seen_by)


def as_memory(entry: Entry) -> Memory:
    """Return the memory an entry of the long-term bank holds."""
    scope: Scope = "agent" if entry.metadata.get("scope") == "agent" else "user"
    return Memory(
        id=entry.id,
        user=entry.key,
        agent=entry.metadata.get("agent"),
        scope=scope,
        type=check_type(entry.memory_type or "fact"),
        content=entry.content,
        tags=[tag for tag in entry.tags if not is_identity_tag(tag)],
        created_at=entry.created_at,
        token_count=entry.token_count,
    )
