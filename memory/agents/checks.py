"""What `verify` and `maintain` check and repair in the agent layers' own banks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.agents import identity, session
from memory.agents.registry import SESSION_BANK, WORKING_BANK
from memory.agents.storage import rows
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.context import Context
    from memory.models import Bank


def problems(ctx: Context, bank: Bank) -> list[str]:
    """Return one line per layer rule `bank` breaks (none for a bank of no layer)."""
    if bank.name == SESSION_BANK and bank.type == "general":
        return session.duplicate_problems(ctx, bank)
    return []


def repair(ctx: Context, bank: Bank) -> list[str]:
    """Repair what `problems` finds and tag old rows with their identity; returns what was
    wrong."""
    found: list[str] = []
    if bank.name == SESSION_BANK and bank.type == "general":
        found += session.repair_duplicates(ctx, bank)
    if (bank.name, bank.type) in ((SESSION_BANK, "general"), (WORKING_BANK, "conversation")):
        found += tag_legacy_rows(ctx, bank)
    return found


def tag_legacy_rows(ctx: Context, bank: Bank) -> list[str]:
    """Give the rows written before identity tags existed their `user:`/`agent:` tags (from
    their metadata), so a user's wipe selects them by filter; returns what was repaired.
    Reads every row of the bank once; after it the wipe's fallback
    (`identity.legacy_rows_of`) finds nothing."""
    groups = identity.legacy_tag_sets(rows(ctx, bank, EntryFilter()))
    tagged = sum(
        ctx.store.add_tags(bank.id, EntryFilter.of_ids(ids), tags) for tags, ids in groups.items()
    )
    if not tagged:
        return []
    return [f"{tagged} layer rows written before identity tags now carry their user's tag"]
