"""Read entries: by filter, a key's whole thread, one entry by id (`EntryStore.entries`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory import validation
from memory.errors import NotFound
from memory.models import Bank, Entry
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.context import Context

__all__ = ["get_entry", "load", "read"]


def read(ctx: Context, bank: Bank, flt: EntryFilter | None = None) -> list[Entry]:
    """Return the entries `flt` matches (None: every entry), oldest first."""
    return ctx.store.entries(bank.id, flt)


def load(ctx: Context, bank: Bank, key: str) -> list[Entry]:
    """Return the whole thread (every entry) of `key`, oldest first."""
    validation.check_filters(bank, key=key)
    return read(ctx, bank, EntryFilter.key(key))


def get_entry(ctx: Context, bank: Bank, entry_id: str) -> Entry:
    """Return one entry by id; NotFound if it does not exist in this bank."""
    validation.check_text("entry id", entry_id)
    found = read(ctx, bank, EntryFilter.entry(entry_id))
    if not found:
        raise NotFound(f"no entry {entry_id!r} in bank {bank.name!r}")
    return found[0]
