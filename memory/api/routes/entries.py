"""Entries of a bank: write, search, load a thread (paged), get one, forget one."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Query, Request, Response

from memory.api.deps import Ctx
from memory.api.etags import ETAG_RESPONSES, IF_MATCH_RESPONSES, check_if_match, tagged
from memory.api.models.entries import ForgetReceipt, SearchResults
from memory.api.routes.common import Limit, Offset
from memory.api.schemas import EntryWrite, Page
from memory.api.writes import Writes
from memory.context import Context
from memory.models import Entry, EntryIn, SearchQuery
from memory.ops import banks, entries

router = APIRouter(prefix="/memory_banks/{bank_id}", tags=["entries"])


@router.post("/entries", status_code=201, summary="Write an entry")
async def write_entry(
    ctx: Ctx, pool: Writes, bank_id: str, body: EntryWrite, response: Response
) -> Entry:
    """Chunk, embed and store one entry (inline compaction may follow for its key); an
    account's writes take turns in the write pool."""
    request = entries.WriteRequest(bank_id, items=[EntryIn(**body.model_dump())])
    (entry,) = (await pool.run(ctx, lambda local: entries.write(local, request))).entries
    tagged(response, entry)
    return entry


@router.post("/search", summary="Search a memory bank")
def search_entries(ctx: Ctx, bank_id: str, body: SearchQuery) -> SearchResults:
    """Hybrid (default), vector or full-text search with key, tag, speaker and time filters."""
    return SearchResults(data=entries.search(ctx, entries.SearchRequest(bank_id, body)).hits)


@router.get("/entries", summary="Load a thread")
def load_thread(
    ctx: Ctx,
    bank_id: str,
    key: Annotated[str, Query(description="the conversation or group key")],
    limit: Limit = 100,
    offset: Offset = 0,
    cursor: Annotated[
        str | None,
        Query(max_length=200, description="next_cursor of the page before (instead of offset)"),
    ] = None,
) -> Page[Entry]:
    """Every entry of `key`, oldest first, a page at a time (each page read at its own cost,
    whatever the thread's length); follow `next_cursor` (or `next_offset`)."""
    return thread_page(ctx, bank_id, key, limit, offset, cursor)


def thread_page(
    ctx: Context, bank_id: str, key: str, limit: int, offset: int, cursor: str | None
) -> Page[Entry]:
    """Return a page of a thread as the REST API and the MCP tool show it."""
    request = entries.LoadPageRequest(bank_id, key, limit=limit, offset=offset, cursor=cursor)
    found = entries.load_page(ctx, request)
    shown = found.page.entries
    following = offset + len(shown)
    more = found.page.next_after is not None
    return Page[Entry](
        data=shown,
        total=found.page.total,
        limit=limit,
        offset=offset,
        next_offset=following if more and cursor is None else None,
        next_cursor=found.next_cursor,
    )


@router.get("/entries/{entry_id}", summary="Get an entry", responses=ETAG_RESPONSES)
def get_entry(ctx: Ctx, bank_id: str, entry_id: str, response: Response) -> Entry:
    """One entry by id (its `ETag` header is what `If-Match` takes)."""
    found = banks.get_entry(ctx, bank_id, entry_id)
    tagged(response, found)
    return found


@router.delete("/entries/{entry_id}", summary="Forget an entry", responses=IF_MATCH_RESPONSES)
def forget_entry(
    ctx: Ctx, bank_id: str, entry_id: str, request: Request, later: BackgroundTasks
) -> ForgetReceipt:
    """Delete an entry for good: text, vectors, attachments and the old versions holding them
    (`If-Match`: only if it is still the entry read). Answers once it is unreadable
    (`final_at` null); the prune runs right after the response (`membank verify` says when
    the bank is final)."""
    check_if_match(request, lambda: banks.get_entry(ctx, bank_id, entry_id))
    result = entries.forget(ctx, entries.ForgetRequest(bank_id, entry_id, final=False))
    later.add_task(entries.finish_forget, ctx, result, quiet=True)
    return ForgetReceipt(id=result.entry.id, final_at=result.receipt.final_at)
