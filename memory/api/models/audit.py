"""What the audit route answers: a page of the audit log."""

from __future__ import annotations

from pydantic import BaseModel

from memory.ops.audit import AuditEvent


class AuditPage(BaseModel):
    """A page of the audit log, newest first."""

    data: list[AuditEvent]
    next_cursor: str | None
    """Send as `cursor` for the next (older) page; null on the last one."""
