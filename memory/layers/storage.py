"""The banks the agent layers keep their rows in, made on first use in the context's account."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory import banks
from memory.errors import Conflict, NotFound
from memory.models import Bank, BankCreate, BankType

if TYPE_CHECKING:
    from memory.context import Context

LAYER_MODE = "fast"
"""Embedding mode of the layer banks (their rows are read by key, rarely searched)."""


def layer_bank(ctx: Context, name: str, bank_type: BankType, description: str) -> Bank:
    """Return the account's bank `name`, creating it (indefinite retention) when missing.

    Two processes creating it at once both end with the one bank (a lost name claim reads
    the winner's).
    """
    try:
        return banks.get(ctx, name)
    except NotFound:
        pass
    request = BankCreate(
        name=name,
        type=bank_type,
        mode=LAYER_MODE,
        description=description,
        retention_days=None,
    )
    try:
        return banks.create(ctx, request)
    except Conflict:
        return banks.get(ctx, name)


def existing_bank(ctx: Context, name: str) -> Bank | None:
    """Return the account's bank `name`, or None when it was never made."""
    try:
        return banks.get(ctx, name)
    except NotFound:
        return None
