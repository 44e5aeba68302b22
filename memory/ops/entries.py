"""Entry use cases: write (append, then compact the touched partitions over a threshold),
search, load (whole, or a page at the page's cost), forget. The bank is resolved once per call."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from memory import banks, entries
from memory.models import Bank, Entry, EntryIn, SearchHit, SearchQuery
from memory.ops.compaction import compact_if_over
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


@dataclass(frozen=True)
class ForgetResult:
    bank: Bank
    entry: Entry


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
    """Delete one entry for good (text, vectors, attachments, old versions)."""
    bank = banks.get(ctx, request.bank)
    return ForgetResult(bank=bank, entry=entries.forget(ctx, bank, request.entry_id))
