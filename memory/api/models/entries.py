"""What the entry routes answer: search hits and the receipt of a forget."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from memory.models import SearchHit


class SearchResults(BaseModel):
    """Search hits, best first."""

    data: list[SearchHit]


class Forgotten(BaseModel):
    """An entry deleted for good: its text, vectors and old versions are gone."""

    id: str
    forgotten: bool = True


class ForgetReceipt(Forgotten):
    """A forget's answer over REST: the entry is unreadable; `final_at` says when nothing
    deleted was left on disk (null: the prune runs right after this response)."""

    final_at: datetime | None = None
