"""Read entries: by filter, a key's whole thread, one entry by id (`EntryStore.entries`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory import validation
from memory.errors import NotFound
from memory.models import Bank, Entry
from memory.store.rows import entry_from_row
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.context import Context

__all__ = ["entry_from_row", "get_entry", "load", "matching", "read"]


def matching(ctx: Context, bank: Bank, flt: EntryFilter | None = None) -> list[Entry]:
    """Return the entries `flt` matches (None: every entry), oldest first."""
    return ctx.store.entries(bank.id, flt)


def read(ctx: Context, bank: Bank, where: str | None = None) -> list[Entry]:
    """Return the entries matching `where` (an entry-level storage predicate), oldest first.

    Kept for callers not yet on EntryFilter (`matching`).
    """
    from memory.store import filters
    from memory.store.rows import entries_of
    from memory.store.schema import ENTRY_COLUMNS

    predicate = filters.conjoin(filters.HEAD_ROWS, where)
    table = ctx.store.scan(bank.id, columns=ENTRY_COLUMNS, where=predicate)
    return entries_of(bank.id, table.to_pylist())


def load(ctx: Context, bank: Bank, key: str) -> list[Entry]:
    """Return the whole thread (every entry) of `key`, oldest first."""
    validation.check_filters(bank, key=key)
    return matching(ctx, bank, EntryFilter.key(key))


def get_entry(ctx: Context, bank: Bank, entry_id: str) -> Entry:
    """Return one entry by id; NotFound if it does not exist in this bank."""
    validation.check_text("entry id", entry_id)
    found = matching(ctx, bank, EntryFilter.entry(entry_id))
    if not found:
        raise NotFound(f"no entry {entry_id!r} in bank {bank.name!r}")
    return found[0]
