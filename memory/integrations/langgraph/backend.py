"""What `MembankStore` needs of membank, as a small Protocol, and its in-process backend.

`Backend` is the whole seam: banks by name, the long-term memory bank, write, read (a
partition, or every entry under a tag), search and final deletion. `LocalBackend` runs them
through `memory.ops` on a `Context` (the default storage, like every `membank` command);
`RestBackend` (`memory.integrations.langgraph.rest`) runs them over `memory.client`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from memory.agents import longterm
from memory.agents.store_items import STORE_MARK
from memory.errors import InvalidInput, NotFound
from memory.models import BankCreate, Entry, EntryIn, SearchHit, SearchQuery
from memory.ops import banks as bank_ops
from memory.ops import entries as entry_ops
from memory.ops.tagged import TaggedPageRequest, tagged_page

if TYPE_CHECKING:
    from memory.context import Context

MARK = STORE_MARK
"""Description of the banks the store makes; it reads and writes only banks carrying it (the
per-user wipe finds them by it: `memory.agents.store_items`)."""
MAX_SEARCH = 1000
"""Most hits one search asks for (membank's own limit on k)."""


class Backend(Protocol):
    """The membank operations a LangGraph store runs."""

    def bank_id(self, name: str, *, create: bool, retention_days: int | None) -> str | None:
        """Return the id of the store's bank `name` (made when `create`; None if none)."""
        ...

    def bank_ids(self) -> list[str]:
        """Return the ids of every bank the store made, oldest first."""
        ...

    def memory_bank_id(self, *, create: bool) -> str | None:
        """Return the id of the account's long-term memory bank (made like the layer makes
        it when `create`; None if none)."""
        ...

    def write(self, bank_id: str, item: EntryIn) -> Entry:
        """Store one entry; returns it as stored."""
        ...

    def partition(self, bank_id: str, key: str) -> list[Entry]:
        """Return every entry of one partition key, oldest first."""
        ...

    def tagged(self, bank_id: str, tag: str | None) -> list[Entry]:
        """Return every entry carrying `tag` (None: every entry of the bank)."""
        ...

    def search(self, bank_id: str, text: str, *, tag: str | None, k: int) -> list[SearchHit]:
        """Return up to `k` entries closest to `text` (under `tag`), best first."""
        ...

    def forget(self, bank_id: str, entry_id: str) -> None:
        """Delete one entry for good (text, vectors, old versions)."""
        ...


class LocalBackend:
    """The backend on a Context, through `memory.ops` (the same calls as the CLI)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def bank_id(self, name: str, *, create: bool, retention_days: int | None) -> str | None:
        """Return the id of the store's bank `name`, made when `create` and missing.

        Raises:
            InvalidInput: a bank of that name exists that the store did not make (its
                entries are not LangGraph items), or the name is not a valid bank name.
        """
        try:
            bank = bank_ops.get(self.ctx, name)
        except NotFound:
            if not create:
                return None
            spec = BankCreate(
                name=name, type="general", description=MARK, retention_days=retention_days
            )
            bank = bank_ops.create(self.ctx, bank_ops.CreateBank(spec=spec))
        if bank.description != MARK:
            raise InvalidInput(
                f"namespace root {name!r} names bank {bank.name!r}, which the LangGraph store "
                "did not make: start the namespace with another label"
            )
        return bank.id

    def bank_ids(self) -> list[str]:
        """Return the ids of every bank the store made, oldest first."""
        return [bank.id for bank in bank_ops.list_banks(self.ctx) if bank.description == MARK]

    def memory_bank_id(self, *, create: bool) -> str | None:
        """Return the id of the long-term memory bank (`membank memory ...`'s)."""
        bank = longterm.memory_bank(self.ctx, create=create)
        return bank.id if bank is not None else None

    def write(self, bank_id: str, item: EntryIn) -> Entry:
        """Store one entry through `membank write`'s use case; returns it."""
        written = entry_ops.write(self.ctx, entry_ops.WriteRequest(bank=bank_id, items=[item]))
        return written.entries[0]

    def partition(self, bank_id: str, key: str) -> list[Entry]:
        """Return one partition's entries (`membank load`), oldest first."""
        return entry_ops.load(self.ctx, entry_ops.LoadRequest(bank=bank_id, key=key)).entries

    def tagged(self, bank_id: str, tag: str | None) -> list[Entry]:
        """Return every entry of the bank carrying `tag` (None: all), oldest first."""
        found: list[Entry] = []
        request: TaggedPageRequest | None = TaggedPageRequest(bank_id, tag, limit=1000)
        while request is not None:
            page = tagged_page(self.ctx, request)
            found += page.page.entries
            after = page.next_cursor
            request = replace(request, cursor=after) if after is not None else None
        return found

    def search(self, bank_id: str, text: str, *, tag: str | None, k: int) -> list[SearchHit]:
        """Return the hybrid search's best `k` hits under `tag`, every score kept."""
        query = SearchQuery(
            text=text, k=min(max(k, 1), MAX_SEARCH), tags=[tag] if tag else [], min_score=0.0
        )
        request = entry_ops.SearchRequest(bank=bank_id, query=query)
        return entry_ops.search(self.ctx, request).hits

    def forget(self, bank_id: str, entry_id: str) -> None:
        """Delete one entry for good (`membank forget`)."""
        entry_ops.forget(self.ctx, entry_ops.ForgetRequest(bank=bank_id, entry_id=entry_id))
