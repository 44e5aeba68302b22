"""`MembankStore`: LangGraph's `BaseStore` over membank banks (see the package docstring for
the mapping). Every operation runs through a `Backend`: in process (`memory.ops` on the
default storage or a given Context) or over REST (`memory.client.Client`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from langgraph.store.base.embed import get_text_at_path

from memory.agents import longterm
from memory.errors import InvalidInput
from memory.integrations.langgraph import records
from memory.integrations.langgraph.backend import MAX_SEARCH, Backend, LocalBackend
from memory.integrations.langgraph.records import IndexFields, Namespace, StoredItem
from memory.models import EntryIn

if TYPE_CHECKING:
    from memory.client import Client
    from memory.context import Context

MINUTES_PER_DAY = 24 * 60


class MembankStore(BaseStore):
    """A LangGraph store whose items are membank entries: semantic search by membank's
    hybrid search, deletion final, retention instead of per-item TTL.

    Args:
        context: the membank context to use (default: `open_context()` on MEMBANK_URI and
            MEMBANK_ACCOUNT, like every `membank` command).
        backend: a backend of your own (default: in process on `context`).
        client: a `memory.client.Client` of a membank server: every operation is a REST
            call of the client's account (`RestBackend`).
        index_fields: the value fields whose text is searched (paths as LangGraph's
            `index["fields"]`; default: every text leaf of the value).
        ttl: LangGraph's TTL config; its `default_ttl` (minutes) becomes the retention of
            the banks the store makes and must be whole days.
        user_at: the position of the user id in namespaces (LangMem's `("memories",
            "{user_id}")`: 1): the items of a namespace that long are then that user's
            long-term memories (`membank memory recall --user U` finds them; the user's
            wipe deletes them). Cannot be given with `ttl` (memories are kept until
            forgotten).
    """

    def __init__(
        self,
        *,
        context: Context | None = None,
        backend: Backend | None = None,
        client: Client | None = None,
        index_fields: Sequence[str] | None = None,
        ttl: TTLConfig | None = None,
        user_at: int | None = None,
    ) -> None:
        if backend is None and client is not None:
            from memory.integrations.langgraph.rest import RestBackend

            backend = RestBackend(client)
        if backend is None:
            if context is None:
                from memory.wiring import open_context

                context = open_context()
            backend = LocalBackend(context)
        self.backend = backend
        self.index_fields = list(index_fields) if index_fields is not None else None
        self.retention_days = _retention_of(ttl)
        self.ttl_config = ttl
        self.supports_ttl = self.retention_days is not None
        if user_at is not None and user_at < 0:
            raise InvalidInput(f"user_at={user_at}: give the namespace position of the user id")
        if user_at is not None and ttl is not None:
            raise InvalidInput(
                "user_at and ttl cannot be given together: a user's items are long-term "
                "memories, kept until forgotten (make a second store for expiring items)"
            )
        self.user_at = user_at
        self._lock = threading.Lock()

    # the two entry points ---------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order; returns one result per operation."""
        with self._lock:  # one writer at a time: abatch callers share this store
            return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run `batch` in a worker thread (membank's storage calls block)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise InvalidInput(f"unknown LangGraph store operation {type(op).__name__}")

    # get and put -----------------------------------------------------------------------

    def _user_of(self, namespace: Namespace) -> str | None:
        """Return the user a namespace names (None: not a user's namespace)."""
        at = self.user_at
        return namespace[at] if at is not None and at < len(namespace) else None

    def _bank_of(self, namespace: Namespace, *, create: bool) -> str | None:
        """Return the id of the bank that holds the items of `namespace` (None: none yet)."""
        if self._user_of(namespace) is not None:
            return self.backend.memory_bank_id(create=create)
        return self.backend.bank_id(namespace[0], create=create, retention_days=self.retention_days)

    def _versions(self, namespace: Namespace, key: str) -> tuple[str | None, list[StoredItem]]:
        """Return the bank id of `namespace` (None: none yet) and the item's stored versions."""
        bank_id = self._bank_of(namespace, create=False)
        if bank_id is None:
            return None, []
        user = self._user_of(namespace)
        partition = user if user is not None else records.partition_key(namespace, key)
        found = []
        for entry in self.backend.partition(bank_id, partition):
            item = records.stored_item(entry)
            if item is not None and item.namespace == namespace and item.key == key:
                found.append(item)
        return bank_id, found

    def _get(self, op: GetOp) -> Item | None:
        _, versions = self._versions(op.namespace, op.key)
        newest = records.latest(versions)
        return _item(newest[0]) if newest else None

    def _put(self, op: PutOp) -> None:
        if op.ttl is not None and (self.retention_days is None or op.ttl != self._default_ttl):
            raise NotImplementedError(
                f"per-item TTL ({op.ttl} minutes) cannot be kept: membank expires a whole bank "
                "by its retention_days; give MembankStore(ttl={'default_ttl': DAYS * 1440}) "
                "and no per-item ttl"
            )
        if not op.namespace:
            raise InvalidInput("a LangGraph namespace needs at least one label (the bank)")
        bank_id, versions = self._versions(op.namespace, op.key)
        if op.value is not None:
            first = min((item.created_at for item in versions), default=None)
            entry = self._entry(op, first)  # checked before any bank is made
            if bank_id is None:
                bank_id = self._bank_of(op.namespace, create=True)
                assert bank_id is not None  # made when missing
            self.backend.write(bank_id, entry)  # the new value first: a crash keeps one
        for item in versions:
            assert bank_id is not None  # versions were read from it
            self.backend.forget(bank_id, item.entry_id)

    def _entry(self, op: PutOp, created_at: datetime | None) -> EntryIn:
        """Return the entry that stores a put's item: in its namespace's bank, or (a user's
        namespace) as a long-term memory of the user.

        Raises:
            InvalidInput: the value is not a JSON object, or is not a valid memory of its
                user (over a memory's 256 tokens, a user id membank refuses).
        """
        value = dict(op.value or {})
        user = self._user_of(op.namespace)
        entry = records.entry_in(
            op.namespace,
            op.key,
            value,
            texts=self._texts(value, op.index),
            indexed=op.index is not False,
            created_at=created_at,
            from_root=user is not None,
        )
        if user is None:
            return entry
        try:
            return longterm.memory_entry(
                user, entry.content, stored_tags=entry.tags, metadata=entry.metadata
            )
        except InvalidInput as exc:
            raise InvalidInput(
                f"item {op.key!r} of namespace {op.namespace} is a long-term memory of user "
                f"{user!r} (user_at={self.user_at}): {exc}; keep long documents in a "
                "namespace without the user label"
            ) from exc

    @property
    def _default_ttl(self) -> float | None:
        return self.ttl_config.get("default_ttl") if self.ttl_config else None

    def _texts(self, value: dict[str, Any], index: IndexFields | list[str]) -> list[str]:
        if index is False:
            return []
        fields = index if index is not None else self.index_fields
        if fields is None:
            return records.leaf_text(value)
        return [text for path in fields for text in get_text_at_path(value, path)]

    # search and list -------------------------------------------------------------------

    def _places(self, prefix: Namespace) -> list[tuple[str, bool]]:
        """Return the banks that may hold items under `prefix`, each with whether it is the
        long-term memory bank (whose entries are tagged from the namespace's first label)."""
        places: list[tuple[str, bool]] = []
        if self.user_at is None or len(prefix) <= self.user_at:  # else only a user's items
            if not prefix or prefix[0] == records.WILDCARD:
                places += [(bank_id, False) for bank_id in self.backend.bank_ids()]
            else:
                found = self.backend.bank_id(prefix[0], create=False, retention_days=None)
                places += [(found, False)] if found else []
        if self.user_at is not None:
            memory = self.backend.memory_bank_id(create=False)
            places += [(memory, True)] if memory else []
        return places

    def _listed(self, prefix: Namespace) -> list[tuple[str, StoredItem]]:
        every = []
        for bank_id, from_root in self._places(prefix):
            tag = records.prefix_tag(prefix, from_root=from_root)
            items = [records.stored_item(entry) for entry in self.backend.tagged(bank_id, tag)]
            kept = [item for item in items if item and records.under(item.namespace, prefix)]
            every += [(bank_id, item) for item in records.latest(kept)]
        return every

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = op.namespace_prefix
        if op.query is None or not op.query.strip():
            listed = [item for _, item in self._listed(prefix)]
            found = [item for item in listed if records.matches_filter(item.value, op.filter)]
            found.sort(key=lambda item: (item.updated_at, item.entry_id), reverse=True)
            page = found[op.offset : op.offset + op.limit]
            return [_search_item(item, None) for item in page]
        need = MAX_SEARCH if op.filter or records.WILDCARD in prefix else op.offset + op.limit
        scored: dict[str, tuple[StoredItem, float]] = {}
        for bank_id, from_root in self._places(prefix):
            tag = records.prefix_tag(prefix, from_root=from_root)
            scored.update(self._scored(bank_id, tag, op, need))
        newest = {item.entry_id for item in records.latest(item for item, _ in scored.values())}
        ranked = sorted(
            (pair for pair in scored.values() if pair[0].entry_id in newest),
            key=lambda pair: -pair[1],
        )
        results = [_search_item(item, score) for item, score in ranked]
        if len(results) < op.offset + op.limit:  # unindexed items come after, unscored
            results += [
                _search_item(item, None)
                for _, item in self._listed(prefix)
                if not item.indexed and records.matches_filter(item.value, op.filter)
            ]
        return results[op.offset : op.offset + op.limit]

    def _scored(
        self, bank_id: str, tag: str | None, op: SearchOp, need: int
    ) -> dict[str, tuple[StoredItem, float]]:
        """Return the items of one bank a query finds under the prefix (its entries carry
        `tag`) and filter, with their scores: at least `need` of them when the bank has as
        many (hits that are not items, unindexed or filtered out are skipped, so a short page
        asks again, deeper)."""
        prefix, depth = op.namespace_prefix, need
        while True:
            hits = self.backend.search(bank_id, op.query or "", tag=tag, k=depth)
            scored: dict[str, tuple[StoredItem, float]] = {}
            for hit in hits:
                item = records.stored_item(hit.entry)
                if (
                    item is not None
                    and item.indexed
                    and records.under(item.namespace, prefix)
                    and records.matches_filter(item.value, op.filter)
                ):
                    scored[item.entry_id] = (item, hit.score)
            if len(scored) >= need or len(hits) < depth or depth >= MAX_SEARCH:
                return scored
            depth = min(MAX_SEARCH, depth * 4)

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        prefix: Namespace = ()
        for condition in conditions:
            if condition.match_type == "prefix":
                prefix = tuple(condition.path)
        every = {item.namespace for _, item in self._listed(prefix)}
        kept = set()
        for namespace in every:
            if all(
                records.under(namespace, tuple(condition.path))
                if condition.match_type == "prefix"
                else records.ends_with(namespace, tuple(condition.path))
                for condition in conditions
            ):
                kept.add(namespace if op.max_depth is None else namespace[: op.max_depth])
        return sorted(kept)[op.offset : op.offset + op.limit]


def _retention_of(ttl: TTLConfig | None) -> int | None:
    """Return the retention days a TTL config maps to (None: keep items indefinitely).

    Raises:
        InvalidInput: a default TTL that is not a whole number of days.
    """
    minutes = ttl.get("default_ttl") if ttl else None
    if minutes is None:
        return None
    days, rest = divmod(minutes, MINUTES_PER_DAY)
    if rest or days < 1:
        raise InvalidInput(
            f"default_ttl {minutes} minutes is not a whole number of days: membank keeps "
            f"entries for a bank's retention_days, so give a multiple of {MINUTES_PER_DAY}"
        )
    return int(days)


def _item(item: StoredItem) -> Item:
    return Item(
        value=item.value,
        key=item.key,
        namespace=item.namespace,
        created_at=item.created_at,
        updated_at=item.updated_at,
    )


def _search_item(item: StoredItem, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )
