"""`RestBackend`: the LangGraph store's backend over a membank server, through
`memory.client.Client` (the same operations as `LocalBackend`, as REST calls: banks by name,
the long-term memory bank (written as `remember` writes, with the item in its metadata),
write, load a partition, list by tag, search, forget)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.agents.storage import LAYER_BANKS, LONG_TERM_BANK
from memory.client import Conflict, NotFound
from memory.errors import InvalidInput
from memory.integrations.langgraph.backend import MARK, MAX_SEARCH
from memory.models import Entry, EntryIn, SearchHit

if TYPE_CHECKING:
    from memory.client import Client


class RestBackend:
    """The backend on a membank server (a `memory.client.Client` of its account)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._ids: dict[str, str] = {}
        """Bank ids by name, once seen: a name is asked of the server once per backend (a
        bank deleted meanwhile is a NotFound on its next use)."""
        self._memory_bank: str | None = None
        """The long-term memory bank's id, once seen."""

    def bank_id(self, name: str, *, create: bool, retention_days: int | None) -> str | None:
        """Return the id of the store's bank `name`, made when `create` and missing.

        Raises:
            InvalidInput: a bank of that name exists that the store did not make.
        """
        if name in self._ids:
            return self._ids[name]
        try:
            bank = self.client.banks.get(name)
        except NotFound:
            if not create:
                return None
            bank = self.client.banks.create(
                name, type="general", description=MARK, retention_days=retention_days
            )
        if bank.description != MARK:
            raise InvalidInput(
                f"namespace root {name!r} names bank {bank.name!r}, which the LangGraph store "
                "did not make: start the namespace with another label"
            )
        self._ids[name] = bank.id
        return bank.id

    def bank_ids(self) -> list[str]:
        """Return the ids of every bank the store made, oldest first."""
        return [bank.id for bank in self.client.banks.list("general") if bank.description == MARK]

    def memory_bank_id(self, *, create: bool) -> str | None:
        """Return the id of the account's long-term memory bank, made as the layer makes it
        (`memory.agents.storage.LAYER_BANKS`) when `create` and missing.

        Raises:
            InvalidInput: a bank of that name exists with another type.
        """
        spec = LAYER_BANKS[LONG_TERM_BANK]
        if self._memory_bank is not None:
            return self._memory_bank
        try:
            bank = self.client.banks.get(LONG_TERM_BANK)
        except NotFound:
            if not create:
                return None
            try:
                bank = self.client.banks.create(
                    spec.name,
                    type=spec.type,
                    mode=spec.mode,
                    description=spec.description,
                    retention_days=None,
                )
            except Conflict:  # made meanwhile (by a remember, or another store)
                bank = self.client.banks.get(LONG_TERM_BANK)
        if bank.type != spec.type:
            raise InvalidInput(
                f"bank {bank.name!r} is a {bank.type} bank, but long-term memory needs a "
                f"{spec.type} one: rename that bank"
            )
        self._memory_bank = bank.id
        return bank.id

    def write(self, bank_id: str, item: EntryIn) -> Entry:
        """Store one entry (`POST .../entries`); returns it."""
        return self.client.entries.write(
            bank_id,
            key=item.key,
            content=item.content,
            memory_type=item.memory_type,
            tags=list(item.tags),
            metadata=dict(item.metadata),
        )

    def partition(self, bank_id: str, key: str) -> list[Entry]:
        """Return one partition's entries, oldest first (every page)."""
        return list(self.client.entries.load(bank_id, key))

    def tagged(self, bank_id: str, tag: str | None) -> list[Entry]:
        """Return every entry of the bank carrying `tag` (None: all), oldest first."""
        return list(self.client.entries.tagged(bank_id, tag, page_size=1000))

    def search(self, bank_id: str, text: str, *, tag: str | None, k: int) -> list[SearchHit]:
        """Return the hybrid search's best `k` hits under `tag`, every score kept."""
        k = min(max(k, 1), MAX_SEARCH)
        return self.client.search(bank_id, text, k=k, tags=[tag] if tag else None, min_score=0.0)

    def forget(self, bank_id: str, entry_id: str) -> None:
        """Delete one entry for good (`DELETE .../entries/{id}`)."""
        self.client.entries.forget(bank_id, entry_id)
