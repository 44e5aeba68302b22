"""List a bank's entries by tag: one page of the entries carrying a tag (or every entry of
the bank), oldest first, read at the cost of the page. The LangGraph store over REST lists a
namespace this way (each of its entries carries a tag per namespace prefix)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory import banks, validation
from memory.ops.entries import LoadPageResult
from memory.types.entry_filter import EntryFilter
from memory.types.pages import PageAfter

if TYPE_CHECKING:
    from memory.context import Context


@dataclass(frozen=True)
class TaggedPageRequest:
    """One page of the entries carrying `tag` (None: every entry of the bank): `limit`
    entries after `cursor` (a next_cursor given out before), else from `offset`."""

    bank: str
    tag: str | None = None
    limit: int = 100
    offset: int = 0
    cursor: str | None = None


def tagged_page(ctx: Context, request: TaggedPageRequest) -> LoadPageResult:
    """Return one page of the bank's entries carrying the tag, oldest first.

    Raises:
        NotFound: no such bank in the account.
        InvalidInput: a tag no entry could hold, or a bad cursor.
    """
    bank = banks.get(ctx, request.bank)
    flt = None
    if request.tag is not None:
        validation.check_filters(bank, tags=[request.tag])
        flt = EntryFilter(tags=(request.tag,))
    after = PageAfter.parse(request.cursor) if request.cursor is not None else None
    page = ctx.store.entry_page(
        bank.id, flt, limit=request.limit, offset=request.offset, after=after
    )
    return LoadPageResult(bank=bank, page=page)
