"""LangGraph's own store behaviour tests, run against `MembankStore`.

Ported from `libs/checkpoint/tests/test_store.py` in langchain-ai/langgraph: the tests its
`InMemoryStore` passes that are about a store's behaviour (namespaces, put/get/update/delete,
filters, search with and without a query, list_namespaces with depth, limit and offset),
each sync test with its async twin where upstream has one. Adapted, and said where:

- the store is `MembankStore` on a fresh LanceDB folder with membank's shipped offline
  embedder (MiniLM), not `InMemoryStore` with LangGraph's character-count embeddings, so a
  ranking the character embeddings decide (the query "bbbbluuu" finds "blue car") is asked
  with a query a sentence embedder ranks the same way ("blue");
- the concurrent-search test writes 15 documents, not 50 (each put is a real commit);
- not ported: the tests of `AsyncBatchedBaseStore`, of `get_text_at_path` and of the
  mock-store plumbing (they test LangGraph's own classes, not a store), and
  `test_embed_with_path`'s score equalities (membank embeds an entry's text, chunked, not
  one vector per field; the field choice itself is tested in test_langgraph_mapping.py).

Each test runs twice: in process (`MembankStore(context=...)`) and over the REST client
(`MembankStore(client=...)`, marked `server`) against one real `membank api` per module, each
test in an account of its own (so each sees an empty store).
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import InvalidNamespaceError, PutOp

from memory.accounts import create_key
from memory.api.app import create_app
from memory.client import Client, RetryPolicy
from memory.context import Context
from memory.integrations.langgraph import MembankStore
from memory.wiring import open_context

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))
from api_support import serve

NO_WAIT = RetryPolicy(attempts=3, backoff_seconds=0.0, max_wait_seconds=0.0)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Context]]:
    """The REST API on uvicorn over a fresh storage folder (the default embedder, the real
    clock): its URL and the base context (to make keys of new accounts)."""
    folder = tmp_path_factory.mktemp("served")
    base = open_context(str(folder / "db"))
    with serve(create_app(base, exports_dir=folder / "exports")) as running:
        yield running.url, base


@pytest.fixture(params=["in_process", pytest.param("client", marks=pytest.mark.server)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MembankStore]:
    """A MembankStore on a fresh storage folder (the default, offline embedder), or over the
    REST client in a fresh account of the module's server."""
    if request.param == "in_process":
        yield MembankStore(context=open_context(str(tmp_path / "db")))
        return
    url, base = request.getfixturevalue("server")
    key = create_key(base, f"langgraph-{uuid.uuid4().hex[:12]}")
    with Client(url, key.key, retry=NO_WAIT) as client:
        yield MembankStore(client=client)


def put_all(store: MembankStore, namespaces: list[tuple[str, ...]]) -> None:
    for i, namespace in enumerate(namespaces):
        store.put(namespace, f"id_{i}", {"data": f"value_{i:02d}"})


# list_namespaces ----------------------------------------------------------------------------


def test_list_namespaces_basic(store: MembankStore) -> None:
    put_all(
        store,
        [
            ("a", "b", "c"),
            ("a", "b", "d", "e"),
            ("a", "b", "d", "i"),
            ("a", "b", "f"),
            ("a", "c", "f"),
            ("b", "a", "f"),
            ("users", "123"),
            ("users", "456", "settings"),
            ("admin", "users", "789"),
        ],
    )
    under_ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "b"))) == under_ab
    ending_f = [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert sorted(store.list_namespaces(suffix=("f",))) == ending_f
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == ending_f[:2]
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == under_ab[:2]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == under_ab[2:]
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == ending_f[:2]
    assert sorted(store.list_namespaces(suffix=("*", "f"))) == ending_f
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]


def test_list_namespaces_with_wildcards(store: MembankStore) -> None:
    put_all(
        store,
        [
            ("users", "123"),
            ("users", "456"),
            ("users", "789", "settings"),
            ("admin", "users", "789"),
            ("guests", "123"),
            ("guests", "456", "preferences"),
        ],
    )
    assert sorted(store.list_namespaces(prefix=("users", "*"))) == [
        ("users", "123"),
        ("users", "456"),
        ("users", "789", "settings"),
    ]
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []
    store.put(("admin", "users", "settings", "789"), "foo", {"data": "some_val"})
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "789")) == [
        ("admin", "users", "789"),
        ("admin", "users", "settings", "789"),
    ]


def test_list_namespaces_pagination(store: MembankStore) -> None:
    for i in range(20):
        store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": f"value_{i:02d}"})
    for offset in (0, 5, 15):
        page = store.list_namespaces(prefix=("namespace",), limit=5, offset=offset)
        assert page == [("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)]


def test_list_namespaces_max_depth(store: MembankStore) -> None:
    put_all(
        store,
        [("a", "b", "c", "d"), ("a", "b", "c", "e"), ("a", "b", "f"), ("a", "g"), ("h", "i", "j")],
    )
    assert sorted(store.list_namespaces(max_depth=2)) == [("a", "b"), ("a", "g"), ("h", "i")]


def test_list_namespaces_no_conditions(store: MembankStore) -> None:
    namespaces = [("a", "b"), ("c", "d"), ("e", "f", "g")]
    put_all(store, namespaces)
    assert sorted(store.list_namespaces()) == namespaces


def test_list_namespaces_empty_store(store: MembankStore) -> None:
    assert store.list_namespaces() == []


# namespaces, put, get, delete ---------------------------------------------------------------


def test_cannot_put_empty_namespace(store: MembankStore) -> None:
    doc = {"foo": "bar"}
    for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            asyncio.run(store.aput(bad, "foo", doc))

    namespace = ("foo", "langgraph", "foo")

    async def async_round() -> None:
        await store.aput(namespace, "bar", doc)
        found = await store.aget(namespace, "bar")
        assert found is not None and found.value == doc
        assert (await store.asearch(namespace, query="bar"))[0].value == doc
        await store.adelete(namespace, "bar")
        assert await store.aget(namespace, "bar") is None

    asyncio.run(async_round())
    store.put(namespace, "bar", doc)
    found = store.get(namespace, "bar")
    assert found is not None and found.value == doc
    assert store.search(namespace, query="bar")[0].value == doc
    store.delete(namespace, "bar")
    assert store.get(namespace, "bar") is None

    # past the public put (which refuses a "langgraph" root), a batch may use it
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])
    found = store.get(("langgraph", "foo"), "bar")
    assert found is not None and found.value == doc
    assert store.search(("langgraph", "foo"))[0].value == doc
    store.delete(("langgraph", "foo"), "bar")
    assert store.get(("langgraph", "foo"), "bar") is None

    async def async_batch() -> None:
        await store.abatch([PutOp(("valid", "namespace"), "key", doc)])
        found = await store.aget(("valid", "namespace"), "key")
        assert found is not None and found.value == doc
        assert (await store.asearch(("valid", "namespace")))[0].value == doc
        await store.adelete(("valid", "namespace"), "key")
        assert await store.aget(("valid", "namespace"), "key") is None

    asyncio.run(async_batch())


def test_put_get_update_delete(store: MembankStore) -> None:
    """The basic round trip upstream's tests run inside the others, on its own."""
    namespace = ("users", "alice", "prefs")
    assert store.get(namespace, "theme") is None
    store.put(namespace, "theme", {"value": "dark"})
    first = store.get(namespace, "theme")
    assert first is not None and first.value == {"value": "dark"}
    assert first.namespace == namespace and first.key == "theme"
    store.put(namespace, "theme", {"value": "light"})
    second = store.get(namespace, "theme")
    assert second is not None and second.value == {"value": "light"}
    assert second.created_at == first.created_at and second.updated_at >= first.updated_at
    assert [item.value for item in store.search(("users",))] == [{"value": "light"}]
    store.delete(namespace, "theme")
    assert store.get(namespace, "theme") is None
    assert store.search(("users",)) == []


# search with a query (semantic) ------------------------------------------------------------

DOCS = [
    ("doc1", {"text": "short text"}),
    ("doc2", {"text": "longer text document"}),
    ("doc3", {"text": "longest text document here"}),
    ("doc4", {"description": "text in description field"}),
    ("doc5", {"content": "text in content field"}),
    ("doc6", {"body": "text in body field"}),
]


def test_vector_insert_with_auto_embedding(store: MembankStore) -> None:
    for key, value in DOCS:
        store.put(("test",), key, value)
    keys = [found.key for found in store.search(("test",), query="long text")]
    assert "doc2" in keys and "doc3" in keys


def test_async_vector_insert_with_auto_embedding(store: MembankStore) -> None:
    async def run() -> list[str]:
        for key, value in DOCS:
            await store.aput(("test",), key, value)
        return [found.key for found in await store.asearch(("test",), query="long text")]

    keys = asyncio.run(run())
    assert "doc2" in keys and "doc3" in keys


def check_update_with_embedding(store: MembankStore, *, use_async: bool) -> None:
    def put(key: str, value: dict[str, Any], **options: Any) -> None:
        if use_async:
            asyncio.run(store.aput(("test",), key, value, **options))
        else:
            store.put(("test",), key, value, **options)

    def search(query: str, **options: Any) -> list[Any]:
        if use_async:
            return list(asyncio.run(store.asearch(("test",), query=query, **options)))
        return store.search(("test",), query=query, **options)

    put("doc1", {"text": "zany zebra Xerxes"})
    put("doc2", {"text": "something about dogs"})
    put("doc3", {"text": "text about birds"})
    initial = search("Zany Xerxes")
    assert initial[0].key == "doc1"
    initial_score = initial[0].score
    assert initial_score is not None

    put("doc1", {"text": "new text about dogs"})
    after = next((r.score for r in search("Zany Xerxes") if r.key == "doc1"), 0.0)
    assert after is not None and after < initial_score
    for found in search("new text about dogs"):
        if found.key == "doc1":
            assert found.score > after

    put("doc4", {"text": "new text about dogs"}, index=False)  # never ranked by a query
    assert not any(r.key == "doc4" for r in search("new text about dogs", limit=3))


def test_vector_update_with_embedding(store: MembankStore) -> None:
    check_update_with_embedding(store, use_async=False)


def test_async_vector_update_with_embedding(store: MembankStore) -> None:
    check_update_with_embedding(store, use_async=True)


COLOURED = [
    ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
    ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
    ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
    ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
]


def check_search_with_filters(search: Any) -> None:
    found = search(query="apple", filter={"color": "red"})
    assert [r.key for r in found][:1] == ["doc1"] and len(found) == 2
    found = search(query="car", filter={"color": "red"})
    assert [r.key for r in found][:1] == ["doc2"] and len(found) == 2
    # upstream asks "bbbbluuu", which only character-count embeddings rank as "blue"
    found = search(query="blue", filter={"score": {"$gt": 3.2}})
    assert len(found) == 3 and found[0].key == "doc4"
    found = search(query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert [r.key for r in found] == ["doc3"]


def test_vector_search_with_filters(store: MembankStore) -> None:
    for key, value in COLOURED:
        store.put(("test",), key, value)
    check_search_with_filters(lambda **options: store.search(("test",), **options))


def test_async_vector_search_with_filters(store: MembankStore) -> None:
    for key, value in COLOURED:
        asyncio.run(store.aput(("test",), key, value))
    check_search_with_filters(
        lambda **options: list(asyncio.run(store.asearch(("test",), **options)))
    )


def test_async_batched_vector_search_concurrent(store: MembankStore) -> None:
    colors = ["red", "blue", "green", "yellow", "purple"]
    things = ["apple", "car", "house", "book", "phone"]
    scores = [3.0, 3.5, 4.0, 4.5, 5.0]
    docs = [
        (
            f"doc{i}",
            {
                "text": f"{colors[i % 5]} {things[i % 5]}",
                "color": colors[i % 5],
                "score": scores[i % 5],
                "index": i,
            },
        )
        for i in range(15)
    ]
    queries: list[tuple[str, dict[str, Any]]] = [
        ("apple", {"color": "red"}),
        ("car", {"color": "blue"}),
        ("house", {"color": "green"}),
        ("phone", {"score": {"$gt": 4.99}}),
        ("book", {"score": {"$lte": 3.5}}),
        ("apple", {"score": {"$gte": 3.0}, "color": "red"}),
        ("car", {"score": {"$lt": 5.1}, "color": "blue"}),
        ("house", {"index": {"$gt": 7}}),
        ("phone", {"index": {"$lte": 10}}),
    ]

    async def run() -> list[list[Any]]:
        await asyncio.gather(
            *[store.aput(("test",), key, value) for key, value in docs],
            *[store.adelete(("test",), key) for key, _ in docs],
            *[store.aput(("test",), key, value) for key, value in docs],
        )
        return list(
            await asyncio.gather(
                *[store.asearch(("test",), query=q, filter=flt) for q, flt in queries]
            )
        )

    bounds = {
        "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b,
        "$lt": lambda a, b: a < b,
        "$lte": lambda a, b: a <= b,
    }
    for found, (query, flt) in zip(asyncio.run(run()), queries, strict=True):
        assert found, f"no results for {query!r} with filter {flt}"
        for result in found:
            for field, want in flt.items():
                if isinstance(want, dict):
                    assert all(bounds[op](result.value[field], v) for op, v in want.items())
                else:
                    assert result.value[field] == want


def check_pagination(search: Any) -> None:
    first, second = search(limit=2), search(limit=2, offset=2)
    assert len(first) == 2 and len(second) == 2
    assert first[0].key != second[0].key
    assert len(search(limit=10)) == 5


def test_vector_search_pagination(store: MembankStore) -> None:
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    check_pagination(lambda **options: store.search(("test",), query="test", **options))


def test_async_vector_search_pagination(store: MembankStore) -> None:
    for i in range(5):
        asyncio.run(store.aput(("test",), f"doc{i}", {"text": f"test document number {i}"}))
    check_pagination(
        lambda **options: list(asyncio.run(store.asearch(("test",), query="test", **options)))
    )


EDGE_QUERIES = ["", None, "test " * 100, "test!@#$%^&*()"]


def test_vector_search_edge_cases(store: MembankStore) -> None:
    store.put(("test",), "doc1", {"text": "test document"})
    for query in EDGE_QUERIES:
        assert len(store.search(("test",), query=query)) == 1, query


def test_async_vector_search_edge_cases(store: MembankStore) -> None:
    asyncio.run(store.aput(("test",), "doc1", {"text": "test document"}))
    for query in EDGE_QUERIES:
        assert len(asyncio.run(store.asearch(("test",), query=query))) == 1, query


def test_non_ascii(store: MembankStore) -> None:
    texts = ["这是中文", "これは日本語です", "이건 한국어야", "Это русский", "यह रूसी है"]
    for i, text in enumerate(texts, start=1):
        store.put(("user_123", "memories"), str(i), {"text": text})
    for i, text in enumerate(texts, start=1):
        assert store.search(("user_123", "memories"), query=text)[0].key == str(i)


# membank's own, not upstream's: a `user_at` store over the client ---------------------------


@pytest.mark.server
def test_over_the_client_a_users_item_is_their_long_term_memory(
    server: tuple[str, Context],
) -> None:
    url, base = server
    key = create_key(base, f"langgraph-{uuid.uuid4().hex[:12]}")
    with Client(url, key.key, retry=NO_WAIT) as client:
        store = MembankStore(client=client, user_at=1)
        store.put(("memories", "alice"), "m1", {"content": "alice prefers dark mode"})
        store.put(("notes", "alice"), "m1", {"content": "alice parks on level three"})
        store.put(("memories", "alice"), "m1", {"content": "alice prefers light mode"})
        [best, *_] = client.users.recall("alice", "light mode")
        assert best.memory.content == "alice prefers light mode"
        listed = {m.content: m for m in client.users.memories("alice")}
        assert set(listed) == {"alice prefers light mode", "alice parks on level three"}
        got = store.get(("memories", "alice"), "m1")
        assert got is not None and got.value == {"content": "alice prefers light mode"}
        client.users.forget("alice", listed["alice parks on level three"].id)
        assert store.get(("notes", "alice"), "m1") is None
        receipt = client.users.wipe("alice")
        assert receipt.counts.get("long_term") == 1 and receipt.rows_removed == 1
        assert store.search(("memories", "alice")) == []
