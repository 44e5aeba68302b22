"""Helpers the routers share: the bank of a path (404 for another account's), page params."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Query
from pydantic import BeforeValidator

from memory.api.schemas import MAX_PAGE


def _iso_only(value: object) -> object:
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return value
        raise ValueError("give an ISO date or time (2026-12-01 or 2026-12-01T12:00), not a number")
    return value


IsoTime = Annotated[datetime, BeforeValidator(_iso_only)]
"""A time in a query: ISO 8601 only (not a number of seconds)."""

Limit = Annotated[int, Query(ge=1, le=MAX_PAGE, description="page size, 1-1000")]
Offset = Annotated[int, Query(ge=0, le=2**31 - 1, description="items to skip")]
Cursor = Annotated[
    str | None,
    Query(max_length=200, description="next_cursor of the page before (instead of offset)"),
]

__all__ = ["Cursor", "IsoTime", "Limit", "Offset"]
