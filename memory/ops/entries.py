"""Entry use cases: write (append, then compact the touched partitions over a threshold),
search, load (whole, or a page at the page's cost), forget. The bank is resolved once per call.

A forget can answer before its prune (`ForgetRequest(final=False)`): the delete commit makes
the entry unreadable by every read at once, and the surface calls `finish_forget` right after
answering (the CLI after printing, the REST API after sending the response). If the process
dies first, the deletion's mark stays and the next write, retention sweep or `membank
maintain` on the bank finishes it, exactly as after a crash mid-prune; `membank verify` says
a deletion is pending (since when) until then."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from memory import banks, entries, purge
from memory.compaction.bank import compact_if_over
from memory.errors import NotFound
from memory.models import Bank, Entry, EntryIn, SearchHit, SearchQuery
from memory.types.deletion import DeletionReceipt
from memory.types.entry_filter import EntryFilter
from memory.types.pages import EntryPage, PageAfter

if TYPE_CHECKING:
    from memory.compaction.apply import CompactionResult
    from memory.context import Context


@dataclass(frozen=True)
class WriteRequest:
    bank: str
    items: list[EntryIn]


@dataclass(frozen=True)
class WriteResult:
    bank: Bank
    entries: list[Entry]
    compacted: list[CompactionResult] = field(default_factory=list)


@dataclass(frozen=True)
class SearchRequest:
    bank: str
    query: SearchQuery
    rerank_model: str | None = None
    """Overrides MEMBANK_RERANK_MODEL for this search (None: the setting)."""


@dataclass(frozen=True)
class SearchResult:
    bank: Bank
    hits: list[SearchHit]


@dataclass(frozen=True)
class LoadRequest:
    bank: str
    key: str


@dataclass(frozen=True)
class LoadResult:
    bank: Bank
    entries: list[Entry]


@dataclass(frozen=True)
class LoadPageRequest:
    """One page of a key's thread: `limit` entries after `cursor` (a next_cursor given out
    before), else from `offset`."""

    bank: str
    key: str
    limit: int = 100
    offset: int = 0
    cursor: str | None = None


@dataclass(frozen=True)
class LoadPageResult:
    bank: Bank
    page: EntryPage

    @property
    def next_cursor(self) -> str | None:
        """Return the cursor of the next page (None: the last page)."""
        after = self.page.next_after
        return after.cursor() if after is not None else None


@dataclass(frozen=True)
class ForgetRequest:
    bank: str
    entry_id: str
    final: bool = True
    """True: return once nothing deleted is left on disk. False: return once the entry is
    unreadable; the caller then runs `finish_forget` (module docstring)."""


@dataclass(frozen=True)
class ForgetResult:
    bank: Bank
    entry: Entry
    receipt: DeletionReceipt
    """When the entry was deleted and when it became final (`final_at` None: not yet)."""


def write(ctx: Context, request: WriteRequest) -> WriteResult:
    """Validate, chunk, embed and store the items in one commit, then compact each touched
    partition that went over a threshold (the write stands even if a summary fails)."""
    bank = banks.get(ctx, request.bank)
    written = entries.write(ctx, bank, request.items)
    compacted = compact_if_over(ctx, bank, {entry.key for entry in written})
    return WriteResult(bank=bank, entries=written, compacted=compacted)


def search(ctx: Context, request: SearchRequest) -> SearchResult:
    """Return the best hits for the query, best first."""
    from memory import search as searching

    if request.rerank_model is not None:
        settings = ctx.settings.model_copy(update={"rerank_model": request.rerank_model})
        ctx = replace(ctx, settings=settings)
    bank = banks.get(ctx, request.bank)
    return SearchResult(bank=bank, hits=searching.search(ctx, bank, request.query))


def load(ctx: Context, request: LoadRequest) -> LoadResult:
    """Return a key's whole thread, oldest first."""
    bank = banks.get(ctx, request.bank)
    return LoadResult(bank=bank, entries=entries.load(ctx, bank, request.key))


def load_page(ctx: Context, request: LoadPageRequest) -> LoadPageResult:
    """Return one page of a key's thread, oldest first, read at the cost of the page.

    Raises:
        InvalidInput: a bad key or cursor.
    """
    from memory import validation
    from memory.types.entry_filter import EntryFilter

    bank = banks.get(ctx, request.bank)
    validation.check_filters(bank, key=request.key)
    after = PageAfter.parse(request.cursor) if request.cursor is not None else None
    page = ctx.store.entry_page(
        bank.id,
        EntryFilter.key(request.key),
        limit=request.limit,
        offset=request.offset,
        after=after,
    )
    return LoadPageResult(bank=bank, page=page)


def forget(ctx: Context, request: ForgetRequest) -> ForgetResult:
    """Delete one entry for good (text, vectors, attachments, old versions); with
    `request.final` False, return once it is unreadable and leave the prune to
    `finish_forget`.

    Raises:
        NotFound: no such entry (an earlier deletion left unpruned is finished first).
        PrunePending: `final` and the prune failed (the deletion stays due).
    """
    bank = banks.get(ctx, request.bank)
    if request.final:
        entry = entries.forget(ctx, bank, request.entry_id)
        now = datetime.now(UTC)
        receipt = DeletionReceipt(entries=1, pruned=True, deleted_at=now, final_at=now)
        return ForgetResult(bank=bank, entry=entry, receipt=receipt)
    try:
        entry = entries.get_entry(ctx, bank, request.entry_id)
    except NotFound:
        entries.forget(ctx, bank, request.entry_id)  # finishes an unpruned one, raises NotFound
        raise
    try:
        receipt = ctx.store.delete_final(
            bank.id, EntryFilter.entry(entry.id), account=bank.account, prune_now=False
        )
    finally:
        if entry.kind == "summary":  # the count comes from the data, whatever happened
            purge.record_summary_count(ctx, bank)
    return ForgetResult(bank=bank, entry=entry, receipt=receipt)


def finish_forget(ctx: Context, result: ForgetResult, *, quiet: bool = False) -> DeletionReceipt:
    """Prune a forget made with `final=False` (under the bank's lock; a prune running in
    another process is waited for); returns its receipt, `final_at` set once final.

    Raises:
        PrunePending: the prune failed (not with `quiet`, as a background task: it is logged);
            the deletion stays due and the next write, sweep or maintain finishes it.
    """
    if result.receipt.final_at is not None:
        return result.receipt
    pruned = ctx.store.prune_bank(result.bank.id)
    if pruned.pending and quiet:
        _log.warning("forget in bank %s: %s", result.bank.name, pruned.prune_error)
    else:
        pruned.raise_if_pending(result.bank.name)
    return replace(
        result.receipt,
        pruned=pruned.pruned,
        prune_error=pruned.prune_error,
        final_at=pruned.final_at,
    )


_log = logging.getLogger(__name__)
