"""membank as a LangGraph store: `MembankStore`, a `langgraph.store.base.BaseStore` (so LangMem's
`create_manage_memory_tool` / `create_search_memory_tool` and LangGraph agents use membank).
Needs the extra: `pip install 'membank[langgraph]'`.

How LangGraph's items map onto membank:

- **namespace[0] -> bank** (a store without `user_at`, or a namespace naming no user). The
  first label names a general bank, made on the first put
  (description "LangGraph store namespace ..."; the store uses only banks it made, so a
  namespace can never write into an ordinary bank of the same name).
- **the rest of the namespace + key -> partition key.** An item `(("memories", "u1"),
  "k1")` is the entry of key `u1.k1` in bank `memories` (`membank load memories --key
  u1.k1`); LangGraph forbids `.` in namespace labels, so the path reads plainly. Each entry
  also carries one tag per namespace prefix, so a search under `("memories", "u1")` is
  prefiltered to that user's entries.
- **user_at -> long-term memory.** `MembankStore(user_at=1)` says which label is the user
  id (LangMem's `("memories", "{langgraph_user_id}")`). An item whose namespace is long
  enough to name a user is then that user's long-term memory, the one membank's memory layer
  keeps (`memory.agents.longterm`): an entry of the account's `long-term-memory` bank with
  key = the user, the user-wide visibility tag, and the item (namespace, key, value) in its
  metadata as above. Its tags name each namespace prefix from the first label (`lgns:`;
  hidden from the memory's shown tags), so `("memories", "alice")` and `("notes", "alice")`
  stay apart and a search under either is prefiltered to it. Why this and not the user tag
  on a store bank: then the memory is where a user looks for their memories (`membank
  memory recall/list --user`, `/users/{id}/memories`, the lab's Users page, every agent of
  the user's recall), `membank memory forget` and the user wipe delete it once (as the
  `long_term` layer), and the bank's rules (one memory is one chunk, kept until forgotten)
  apply: such an item's text is at most 256 tokens, and `user_at` with `ttl` is refused. A
  namespace too short to name a user keeps the bank of its first label. Memories saved by
  `remember` (no item in their metadata) are not store items. Items a `user_at` store wrote
  before this mapping (in a store bank, user-tagged) are not moved; the wipe still deletes
  them (`memory.agents.store_items`).
- **value -> entry.** The value (a JSON object) is kept whole in the entry's metadata
  (`langgraph`); the entry's content is the text of its indexed fields (`index=[...]` on the
  put, or the store's `index_fields`; default every text leaf), which membank chunks and
  embeds with the bank's mode (the offline MiniLM by default). `index=False`: the item is
  listed and filtered but never ranked by a query.
- **put = write, update = write then forget.** An update writes the new entry first, then
  deletes the old one for good, so `created_at` stays the item's first put and `updated_at`
  is the last. `delete` is membank's final deletion (text, vectors, old table versions).
- **search.** With a query: membank's hybrid search (vector + full-text) in the prefix's
  banks, every score kept, then `filter` on the value's fields (`$eq $ne $gt $gte $lt
  $lte`), then offset/limit (a filtered or wildcard search ranks at most 1000 entries per
  bank). Without a query: the items under the prefix, newest first, filtered.
- **list_namespaces.** Distinct namespaces of the store's banks, prefix/suffix conditions
  (with `*`), `max_depth`, limit and offset, sorted.
- **TTL -> retention.** `MembankStore(ttl={"default_ttl": DAYS * 1440})` gives the banks it
  makes that retention (membank's retention sweep deletes by age of the last write). A
  per-item `ttl` other than that is refused (NotImplementedError): membank expires by bank,
  not by item. `refresh_ttl` on reads has no effect (a read does not rewrite the entry).

`MembankStore(client=Client(url, api_key))` runs the same mapping over a membank server (its
REST API, the key's account), listing a namespace with `GET .../tagged_entries`.

Importing `memory` or running `membank` never imports this package (nor LangGraph).
"""

try:
    import langgraph.store.base  # noqa: F401  (the extra's presence, checked once)
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise ImportError(
        "memory.integrations.langgraph needs LangGraph: pip install 'membank[langgraph]'"
    ) from exc

from memory.integrations.langgraph.backend import Backend, LocalBackend
from memory.integrations.langgraph.store import MembankStore

__all__ = ["Backend", "LocalBackend", "MembankStore"]
