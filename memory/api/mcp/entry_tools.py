"""Entry tools: write, search, load a thread, forget an entry, compact now."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory.api.mcp.inputs import CompactNow, EntryRef, ForgetEntry, LoadThread, Search, WriteEntry
from memory.api.models.entries import ForgetReceipt, SearchResults
from memory.api.routes.entries import thread_page
from memory.api.schemas import Page
from memory.context import Context
from memory.models import Entry
from memory.ops import banks, compaction, entries
from memory.ops.compaction import CompactionResult


def write_memory_bank_entry(ctx: Context, args: WriteEntry) -> Entry:
    """Write one entry to a bank (embedded for search; may trigger compaction of its key)."""
    (entry,) = entries.write(
        ctx, entries.WriteRequest(args.memory_bank_id, [args.to_entry()])
    ).entries
    return entry


def search_memory_bank(ctx: Context, args: Search) -> SearchResults:
    """Search a bank by meaning and words; returns the best entries, each with its best chunk."""
    found = entries.search(ctx, entries.SearchRequest(args.memory_bank_id, args.to_query()))
    return SearchResults(data=found.hits)


def load_memory_bank_thread(ctx: Context, args: LoadThread) -> Page[Entry]:
    """Return a key's thread, oldest first (compaction summaries included), a page at a time."""
    return thread_page(ctx, args.memory_bank_id, args.key, args.limit, args.offset, args.cursor)


def get_memory_bank_entry(ctx: Context, args: EntryRef) -> Entry:
    """Return one entry of a bank by its id."""
    return banks.get_entry(ctx, args.memory_bank_id, args.entry_id)


def forget_memory_bank_entry(ctx: Context, args: ForgetEntry) -> ForgetReceipt:
    """Delete one entry for good: its text, vectors and the old versions holding them. The
    tool answers once the prune is done too (`final_at` set), as REST says later."""
    result = entries.forget(ctx, entries.ForgetRequest(args.memory_bank_id, args.entry_id))
    return ForgetReceipt(id=result.entry.id, final_at=result.receipt.final_at)


def compact_memory_bank_now(ctx: Context, args: CompactNow) -> list[CompactionResult]:
    """Compact every partition of a bank over its thresholds now (or only `key`)."""
    request = compaction.CompactNow(args.memory_bank_id, args.key)
    return compaction.compact_now(ctx, request).partitions


TOOLS: list[Callable[..., Any]] = [
    write_memory_bank_entry,
    search_memory_bank,
    load_memory_bank_thread,
    get_memory_bank_entry,
    forget_memory_bank_entry,
    compact_memory_bank_now,
]
