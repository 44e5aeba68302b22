"""Helpers the routers share: the bank of a path (404 for another account's), page params."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from memory import banks
from memory.api.errors import ApiError
from memory.api.schemas import MAX_PAGE
from memory.context import Context
from memory.errors import NotFound
from memory.models import Bank

Limit = Annotated[int, Query(ge=1, le=MAX_PAGE, description="page size, 1-1000")]
Offset = Annotated[int, Query(ge=0, le=2**31 - 1, description="items to skip")]


def bank_of(ctx: Context, bank_id: str) -> Bank:
    """Return the account's bank `bank_id` (an id or a name).

    Raises:
        ApiError: 404 when the account has no such bank; a bank of another account gets the
            very same answer, so its existence is never revealed.
    """
    try:
        return banks.get(ctx, bank_id)
    except NotFound:
        raise ApiError(
            404, "not_found", f"no memory bank {bank_id[:80]!r}: see GET /memory_banks"
        ) from None
