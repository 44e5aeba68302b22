"""List a bank's entries by tag (`GET /memory_banks/{bank_id}/tagged_entries`), a page at a
time: what the LangGraph store lists a namespace with over REST."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from memory.api.deps import Ctx
from memory.api.routes.common import Limit, Offset
from memory.api.schemas import Page
from memory.models import Entry
from memory.ops import tagged

router = APIRouter(prefix="/memory_banks/{bank_id}", tags=["entries"])


@router.get("/tagged_entries", summary="List entries by tag")
def list_tagged(
    ctx: Ctx,
    bank_id: str,
    tag: Annotated[
        str | None, Query(max_length=200, description="the tag (omitted: every entry)")
    ] = None,
    limit: Limit = 100,
    offset: Offset = 0,
    cursor: Annotated[
        str | None,
        Query(max_length=200, description="next_cursor of the page before (instead of offset)"),
    ] = None,
) -> Page[Entry]:
    """The entries carrying `tag`, oldest first, a page at a time (each page read at its own
    cost); follow `next_cursor` (or `next_offset`)."""
    request = tagged.TaggedPageRequest(bank_id, tag, limit=limit, offset=offset, cursor=cursor)
    found = tagged.tagged_page(ctx, request)
    shown = found.page.entries
    more = found.page.next_after is not None
    return Page[Entry](
        data=shown,
        total=found.page.total,
        limit=limit,
        offset=offset,
        next_offset=offset + len(shown) if more and cursor is None else None,
        next_cursor=found.next_cursor,
    )
