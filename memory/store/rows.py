"""Chunk rows back into entries: the one place a stored row becomes an `Entry`."""

from __future__ import annotations

import json
from typing import Any

from memory.clock import as_utc
from memory.models import Entry


def entry_from_row(bank_id: str, row: dict[str, Any]) -> Entry:
    """Return the Entry of a first-chunk row (the row carrying the entry's whole content)."""
    return Entry(
        id=row["entry_id"],
        bank_id=bank_id,
        key=row["key"],
        content=row["content"] if row.get("content") is not None else row["text"],
        speaker=row.get("speaker"),
        role=row.get("role"),
        memory_type=row.get("memory_type"),
        tags=list(row.get("tags") or []),
        metadata=json.loads(row.get("metadata") or "{}"),
        attachments=json.loads(row.get("attachments") or "[]"),
        kind=row.get("kind") or "entry",
        summary_of=list(row.get("summary_of") or []),
        created_at=as_utc(row["created_at"]),
        token_count=int(row["token_count"]),
    )


def entries_of(bank_id: str, rows: list[dict[str, Any]]) -> list[Entry]:
    """Return the entries of first-chunk rows, oldest first (by time, then write order)."""
    ordered = sorted(rows, key=lambda r: (r["created_at"], r["seq"]))
    return [entry_from_row(bank_id, row) for row in ordered]
