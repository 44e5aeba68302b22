"""Forget an entry for good: its text, vectors, attachments and the old versions holding them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory import purge
from memory.entries.reader import get_entry
from memory.errors import NotFound
from memory.models import Bank, Entry
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.context import Context


def forget(ctx: Context, bank: Bank, entry_id: str) -> Entry:
    """Delete an entry: its text, vectors and attachments, and the old versions holding them.

    Raises:
        NotFound: no such entry; when an earlier deletion's prune had not completed (a forget
            stopped by a full disk), it is finished first and the message says so.
        PrunePending: the entry is deleted but its prune failed; forget again, or run
            `membank maintain`, to finish it.
    """
    try:
        entry = get_entry(ctx, bank, entry_id)
    except NotFound as exc:
        if not purge.finish(ctx, bank):
            raise
        raise NotFound(
            f"{exc}: it may have been deleted already; an earlier deletion whose prune had "
            "not completed is finished now, so nothing deleted is left on disk"
        ) from exc
    try:
        purge.delete_final(ctx, bank, EntryFilter.entry(entry_id))
    finally:
        if entry.kind == "summary":  # the count comes from the data, whatever happened
            purge.record_summary_count(ctx, bank)
    return entry
