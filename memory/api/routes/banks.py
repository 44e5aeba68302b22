"""Banks: list (`?type=`), templates, create, get, update, delete, delete source, agents, stats."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from memory import config
from memory.agents import registry as agents
from memory.api.deps import Ctx, Key, Version
from memory.api.etags import ETAG_RESPONSES, IF_MATCH_RESPONSES, check_if_match, tagged
from memory.api.routes.common import Cursor, IsoTime, Limit, Offset
from memory.api.schemas import AgentRef, Deleted, Page, SourceReset, TemplateOut, page
from memory.context import Context
from memory.models import Bank, BankCreate, BankType, BankUpdate
from memory.ops import banks
from memory.stats import Stats

router = APIRouter(prefix="/memory_banks", tags=["memory banks"])
ETAG_DOC = ETAG_RESPONSES
IF_MATCH_DOC = IF_MATCH_RESPONSES
CHANGE_DOC = {**ETAG_RESPONSES, **IF_MATCH_RESPONSES}


@router.get("", summary="List memory banks")
def list_banks(
    ctx: Ctx,
    key: Key,
    type: Annotated[BankType | None, Query(description="only this type")] = None,  # noqa: A002
    limit: Limit = 100,
    offset: Offset = 0,
    cursor: Cursor = None,
) -> Page[Bank]:
    """The account's banks, oldest first (`?type=conversation` or `?type=general`); a key
    limited to some banks sees only those. Follow `next_cursor` (or `next_offset`)."""
    request = banks.BankPageRequest(
        type=type, limit=limit, offset=offset, cursor=cursor, only=key.banks
    )
    return bank_page(ctx, request)


def bank_page(ctx: Context, request: banks.BankPageRequest) -> Page[Bank]:
    """Return a page of banks as the REST API and the MCP tool show it."""
    found = banks.bank_page(ctx, request)
    more = found.next_cursor is not None
    return Page[Bank](
        data=found.banks,
        total=found.total,
        limit=request.limit,
        offset=request.offset,
        next_offset=request.offset + len(found.banks) if more and request.cursor is None else None,
        next_cursor=found.next_cursor,
    )


@router.get("/templates", summary="List templates")
def list_templates(ctx: Ctx, limit: Limit = 100, offset: Offset = 0) -> Page[TemplateOut]:
    """Pre-built settings for common memory patterns (a create request may name one)."""
    found = [TemplateOut.model_validate(t.model_dump()) for t in config.templates().values()]
    return page(found, limit, offset)


@router.post("", status_code=201, summary="Create a memory bank")
def create_bank(ctx: Ctx, version: Version, body: BankCreate, response: Response) -> Bank:
    """Create a bank; retention defaults by type on `Seclai-Version: 2026-08-03` or later, a
    flat 30 days otherwise; an explicit `retention_days` (null = indefinite) always counts."""
    made = banks.create(ctx, banks.CreateBank(body, api_version=version))
    tagged(response, made)
    return made


@router.get("/{bank_id}", summary="Get a memory bank", responses=ETAG_DOC)
def get_bank(ctx: Ctx, bank_id: str, response: Response) -> Bank:
    """One bank of the account (by id or name); its `ETag` header is what `If-Match` takes."""
    found = banks.get(ctx, bank_id)
    tagged(response, found)
    return found


@router.put("/{bank_id}", summary="Update a memory bank", responses=CHANGE_DOC)
def update_bank(
    ctx: Ctx, version: Version, bank_id: str, body: BankUpdate, request: Request, response: Response
) -> Bank:
    """Apply the sent fields; changing `type` or `mode` is a 409 and changes nothing; with
    `If-Match`, a bank changed since (another ETag) is a 412 and changes nothing."""
    check_if_match(request, lambda: banks.get(ctx, bank_id))
    changed = banks.update(ctx, banks.UpdateBank(bank_id, body, api_version=version))
    tagged(response, changed)
    return changed


@router.delete("/{bank_id}", summary="Delete a memory bank", responses=IF_MATCH_DOC)
def delete_bank(ctx: Ctx, bank_id: str, request: Request) -> Deleted:
    """Delete the bank, its entries and their files (`If-Match`: only if unchanged)."""
    check_if_match(request, lambda: banks.get(ctx, bank_id))
    return Deleted(id=banks.delete(ctx, bank_id).id)


@router.delete(
    "/{bank_id}/source", summary="Delete a memory bank's content source", responses=IF_MATCH_DOC
)
def delete_source(ctx: Ctx, bank_id: str, request: Request) -> SourceReset:
    """Remove every entry and reset the bank's storage; the configuration stays."""
    check_if_match(request, lambda: banks.get(ctx, bank_id))
    return SourceReset(id=banks.reset_source(ctx, bank_id).id)


@router.get("/{bank_id}/agents", summary="List agents using a memory bank")
def list_agents(ctx: Ctx, bank_id: str, limit: Limit = 100, offset: Offset = 0) -> Page[AgentRef]:
    """The agents whose configuration references this bank."""
    bank = banks.get(ctx, bank_id)
    found = [AgentRef(id=a.id, name=a.name) for a in agents.agents_using_bank(ctx, bank)]
    return page(found, limit, offset)


@router.get("/{bank_id}/stats", summary="Get entry statistics")
def get_stats(
    ctx: Ctx,
    bank_id: str,
    days: Annotated[int | None, Query(ge=1, le=36_500, description="the last N days")] = None,
    since: Annotated[IsoTime | None, Query(description="from (inclusive), ISO")] = None,
    until: Annotated[IsoTime | None, Query(description="to (exclusive), ISO")] = None,
    top: Annotated[int, Query(ge=1, le=100, description="rows of each breakdown")] = 10,
) -> Stats:
    """Aggregates over a time frame (default: the last 30 days); never individual entries."""
    request = banks.StatsRequest(bank_id, since=since, until=until, top=top, days=days)
    return banks.stats(ctx, request).stats
