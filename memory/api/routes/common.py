"""Helpers the routers share: the bank of a path (404 for another account's), page params."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from memory.api.schemas import MAX_PAGE
from memory.ops.lab import bank_of

Limit = Annotated[int, Query(ge=1, le=MAX_PAGE, description="page size, 1-1000")]
Offset = Annotated[int, Query(ge=0, le=2**31 - 1, description="items to skip")]

__all__ = ["Limit", "Offset", "bank_of"]
