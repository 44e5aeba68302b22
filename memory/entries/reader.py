"""Read entries: by filter, a key's whole thread, one entry by id; rows back into records."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memory import validation
from memory.clock import as_utc
from memory.errors import NotFound
from memory.models import Bank, Entry
from memory.store import filters
from memory.store.schema import ENTRY_COLUMNS

if TYPE_CHECKING:
    from memory.context import Context


def entry_from_row(bank_id: str, row: dict[str, Any]) -> Entry:
    """Return the Entry of a chunk-0 row."""
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


def read(ctx: Context, bank: Bank, where: str | None = None) -> list[Entry]:
    """Return the entries matching `where` (entry-level), oldest first."""
    predicate = filters.conjoin("chunk_index = 0", where)
    table = ctx.store.scan(bank.id, columns=ENTRY_COLUMNS, where=predicate)
    rows = sorted(table.to_pylist(), key=lambda r: (r["created_at"], r["seq"]))
    return [entry_from_row(bank.id, row) for row in rows]


def load(ctx: Context, bank: Bank, key: str) -> list[Entry]:
    """Return the whole thread (every entry) of `key`, oldest first."""
    validation.check_filters(bank, key=key)
    return read(ctx, bank, filters.equals("key", key))


def get_entry(ctx: Context, bank: Bank, entry_id: str) -> Entry:
    """Return one entry by id; NotFound if it does not exist in this bank."""
    validation.check_text("entry id", entry_id)
    found = read(ctx, bank, filters.equals("entry_id", entry_id))
    if not found:
        raise NotFound(f"no entry {entry_id!r} in bank {bank.name!r}")
    return found[0]
