"""The account's audit log, for its administrators (admin scope): every authenticated
change, newest first, a page at a time (`cursor`: the last id of the page before)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from memory.api.deps import Ctx
from memory.api.models.audit import AuditPage
from memory.api.routes.common import IsoTime, Limit
from memory.ops import audit

router = APIRouter(prefix="/audit", tags=["audit"])


@router.get("", summary="List the audit log")
def list_audit(
    ctx: Ctx,
    limit: Limit = 100,
    cursor: Annotated[
        str | None, Query(max_length=128, description="next_cursor of the page before")
    ] = None,
    since: Annotated[IsoTime | None, Query(description="from (inclusive), ISO")] = None,
    until: Annotated[IsoTime | None, Query(description="to (exclusive), ISO")] = None,
) -> AuditPage:
    """Who changed what: key id, action, target ids, status, request id, time; no entry text."""
    found = audit.events(ctx, limit=limit + 1, cursor=cursor, since=since, until=until)
    shown = found[:limit]
    return AuditPage(data=shown, next_cursor=shown[-1].id if len(found) > limit else None)
