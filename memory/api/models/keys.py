"""What the key routes take and answer: a key to make, a key as listed (never its secret)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from memory.accounts import Scope
from memory.api.schemas import Request


def _read_write() -> list[Scope]:
    return ["read", "write"]


class KeyCreate(Request):
    """A new key of the caller's account."""

    scopes: list[Scope] = Field(
        default_factory=_read_write,
        min_length=1,
        description="read (lists, loads, search, stats, exports), write (changes), admin "
        "(both, plus keys and the audit log)",
    )
    banks: list[str] | None = Field(
        None,
        min_length=1,
        max_length=100,
        description="ids or names of the only banks the key may touch (omitted: every bank)",
    )


class KeyOut(BaseModel):
    """A key as listed: never its secret."""

    key_id: str
    account: str
    created_at: datetime
    revoked_at: datetime | None = None
    scopes: list[Scope]
    banks: list[str] | None = None
    """The ids of the only banks the key may touch (null: every bank of the account)."""
    active: bool
