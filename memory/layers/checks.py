"""What `verify` and `maintain` check and repair in the agent layers' own banks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.layers import session
from memory.layers.agents import SESSION_BANK

if TYPE_CHECKING:
    from memory.context import Context
    from memory.models import Bank


def problems(ctx: Context, bank: Bank) -> list[str]:
    """Return one line per layer rule `bank` breaks (none for a bank of no layer)."""
    if bank.name == SESSION_BANK and bank.type == "general":
        return session.duplicate_problems(ctx, bank)
    return []


def repair(ctx: Context, bank: Bank) -> list[str]:
    """Repair what `problems` finds; returns what was wrong."""
    if bank.name == SESSION_BANK and bank.type == "general":
        return session.repair_duplicates(ctx, bank)
    return []
