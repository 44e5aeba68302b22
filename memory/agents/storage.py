"""The banks the agent layers keep their rows in, made on first use in the context's account.

`LAYER_BANKS` describes each of them (working, session, long-term memory and the agents
bank: name, type, description, mode); `layer_bank` is the one get-or-create of any of them
and `existing_bank` the one look-up. Layer banks are never compacted (`check_no_thresholds`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory import banks, entries
from memory.errors import Conflict, InvalidInput, NotFound
from memory.models import Bank, BankCreate, BankType, BankUpdate, Entry, EntryIn
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.context import Context

LAYER_MODE = "fast"
"""Embedding mode of the layer banks (their rows are read by key, rarely searched; its
256-token chunk is the largest long-term memory, so one memory is one chunk)."""
WORKING_BANK = "working-memory"
"""The conversation bank of working memory (every agent's, keyed by conversation id)."""
SESSION_BANK = "session-memory"
"""The general bank of session memory (one rolling summary per user x agent)."""
LONG_TERM_BANK = "long-term-memory"
"""The general bank that holds every user's long-term memories (keyed by user id)."""
AGENTS_BANK = "membank-agents"
"""The general bank holding agents defined through `define_agent` (one entry per agent)."""


@dataclass(frozen=True)
class LayerBank:
    """How a layer bank is made on first use."""

    name: str
    type: BankType
    description: str
    mode: str = LAYER_MODE


LAYER_BANKS: dict[str, LayerBank] = {
    spec.name: spec
    for spec in (
        LayerBank(
            WORKING_BANK, "conversation", "Working memory: the turns of agents' conversations."
        ),
        LayerBank(SESSION_BANK, "general", "Session memory: one rolling summary per user x agent."),
        LayerBank(
            LONG_TERM_BANK,
            "general",
            "Long-term agent memories: key = user id (membank memory ...)",
        ),
        LayerBank(AGENTS_BANK, "general", "Agents defined through the Python API."),
    )
}
"""Every bank the agent layers own, by name."""
LAYER_BANK_NAMES = frozenset(LAYER_BANKS)


def layer_bank(ctx: Context, name: str) -> Bank:
    """Return the account's layer bank `name` (one of `LAYER_BANKS`), creating it when missing.

    Made with indefinite retention and no compaction thresholds. Two processes creating it
    at once both end with the one bank (a lost name claim reads the winner's).

    Raises:
        InvalidInput: a bank of that name exists with another type.
    """
    spec = LAYER_BANKS[name]
    bank = existing_bank(ctx, name, spec.type)
    if bank is not None:
        return bank
    request = BankCreate(
        name=name,
        type=spec.type,
        mode=spec.mode,
        description=spec.description,
        retention_days=None,
    )
    try:
        return banks.create(ctx, request)
    except Conflict:  # another process made it meanwhile
        return banks.get(ctx, name)


def existing_bank(ctx: Context, name: str, bank_type: BankType | None = None) -> Bank | None:
    """Return the account's bank `name`, or None when it was never made.

    Raises:
        InvalidInput: it exists with another type than `bank_type`.
    """
    try:
        bank = banks.get(ctx, name)
    except NotFound:
        return None
    if bank_type is not None and bank.type != bank_type:
        raise InvalidInput(
            f"bank {name!r} is a {bank.type} bank, but this memory layer needs a {bank_type} "
            "one: rename that bank (`membank bank update ... --name NEW`)"
        )
    return bank


def check_no_thresholds(bank: Bank, request: BankUpdate) -> None:
    """Refuse compaction thresholds on a layer bank: its rows are turns, summaries and
    memories each kept whole (compaction would merge memories into multi-fact summaries).

    Raises:
        InvalidInput: the update sets `max_tokens` or `max_turns` on a layer bank.
    """
    if bank.name not in LAYER_BANK_NAMES:
        return
    sent = [f for f in ("max_tokens", "max_turns") if getattr(request, f, None)]
    if sent:
        raise InvalidInput(
            f"bank {bank.name!r} is an agent memory layer and is never compacted: "
            f"{' and '.join(sent)} cannot be set on it (leave them unset)"
        )


def rows(ctx: Context, bank: Bank, which: EntryFilter) -> list[Entry]:
    """Return the entries of `bank` that `which` selects, oldest first."""
    return ctx.store.entries(bank.id, which)


def append(ctx: Context, bank: Bank, items: list[EntryIn]) -> list[Entry]:
    """Store `items` in one write, then compact the touched partitions that are over a
    threshold (none on a layer bank, unless it was given thresholds before layer banks
    refused them); returns the stored entries."""
    from memory.compaction.bank import compact_if_over

    written = entries.write(ctx, bank, items)
    compact_if_over(ctx, bank, {entry.key for entry in written})
    return written
