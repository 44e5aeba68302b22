"""Search on a real LanceDB: hybrid / vector / full-text, filters, top-k, entry-level, escaping."""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise
from typing import Any

import numpy as np
import pytest

from memory import banks, entries, search
from memory.clock import FixedClock
from memory.config import Mode
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import Bank, BankCreate, EntryIn, SearchMethod, SearchQuery
from memory.ports import Embedder, Vectors
from memory.testing import PlantedEmbedder

METHODS: list[SearchMethod] = ["hybrid", "vector", "fts"]


@pytest.fixture
def conv(ctx: Context) -> Bank:
    """A conversation bank in the default mode."""
    return banks.create(ctx, BankCreate(name="conv", type="conversation"))


def _ids(ctx: Context, bank: Bank, **query: Any) -> list[str]:
    return [h.entry.id for h in search.search(ctx, bank, SearchQuery(**query))]


# methods ----------------------------------------------------------------------------------


def _unit(dims: int, *pairs: tuple[int, float]) -> Vectors:
    vector = np.zeros(dims, dtype=np.float32)
    for index, value in pairs:
        vector[index] = value
    return vector / np.linalg.norm(vector)


def test_hybrid_default_fuses_vector_and_full_text(ctx: Context) -> None:
    """A: the vector twin of the query, no shared word. B: shares the word, orthogonal vector."""
    dims = 384
    query = "quasar"
    semantic = "deep sky object notes"
    lexical = "the quasar observation log"
    decoys = [f"unrelated decoy number {i}" for i in range(4)]
    planted = {query: _unit(dims, (0, 1.0)), semantic: _unit(dims, (0, 1.0))}
    planted[lexical] = _unit(dims, (200, 1.0))
    for i, text in enumerate(decoys):
        planted[text] = _unit(dims, (0, 0.5), (10 + i, 1.0))

    def embedder(mode: Mode) -> Embedder:
        return PlantedEmbedder(mode.dims, planted)

    ctx.embedder = embedder
    bank = banks.create(ctx, BankCreate(name="g", type="general"))
    written = entries.write(
        ctx, bank, [EntryIn(key="k", content=t) for t in [semantic, lexical, *decoys]]
    )
    a, b = written[0].id, written[1].id

    vector = _ids(ctx, bank, text=query, method="vector", min_score=0.0)
    assert vector[0] == a and vector[-1] == b and len(vector) == 6
    # calibrated scores: with the default threshold the orthogonal entry is a weak hit
    assert b not in _ids(ctx, bank, text=query, method="vector")
    assert _ids(ctx, bank, text=query, method="fts") == [b]
    assert SearchQuery(text=query).method == "hybrid"
    hybrid = _ids(ctx, bank, text=query)
    assert set(hybrid[:2]) == {a, b}
    assert set(_ids(ctx, bank, text=query, k=2)) == {a, b}
    assert _ids(ctx, bank, text=query, method="hybrid") == hybrid


def test_hits_carry_entry_score_and_chunk(ctx: Context, conv: Bank) -> None:
    (entry,) = entries.write(
        ctx, conv, [EntryIn(key="k", speaker="ann", content="the parcel arrived damaged")]
    )
    entries.write(ctx, conv, [EntryIn(key="k", speaker="bob", content="weather is nice")])
    for method in METHODS:
        hits = search.search(ctx, conv, SearchQuery(text="parcel damaged", method=method))
        assert hits[0].entry == entry, method
        assert hits[0].chunk == 0 and hits[0].chunk_text == entry.content
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)


# top-k and entry-level results -------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_top_k(ctx: Context, conv: Bank, method: SearchMethod) -> None:
    entries.write(
        ctx,
        conv,
        [EntryIn(key="k", speaker="ann", content=f"invoice number {i} paid") for i in range(12)],
    )
    assert len(_ids(ctx, conv, text="invoice paid", k=3, method=method)) == 3
    assert len(_ids(ctx, conv, text="invoice paid", k=1, method=method)) == 1
    assert len(_ids(ctx, conv, text="invoice paid", k=50, method=method)) == 12


@pytest.mark.parametrize("method", METHODS)
def test_entry_with_many_matching_chunks_appears_once(ctx: Context, method: SearchMethod) -> None:
    bank = banks.create(ctx, BankCreate(name="g", type="general", mode="accurate"))
    long, short, _other = entries.write(
        ctx,
        bank,
        [
            EntryIn(key="k", content=" ".join(["apple orchard"] * 800)),
            EntryIn(key="k", content="an apple pie recipe with cinnamon"),
            EntryIn(key="k", content="banana bread with walnuts"),
        ],
    )
    assert ctx.store.count(bank.id) > 10  # the long entry has many chunks
    ids = _ids(ctx, bank, text="apple orchard", k=10, method=method)
    assert ids.count(long.id) == 1
    assert len(ids) == len(set(ids))
    # top-k counts entries, not chunks: the long entry's chunks must not crowd out the rest
    two = _ids(ctx, bank, text="apple orchard", k=2, method=method)
    assert len(two) == 2 and two[0] == long.id
    assert short.id in two


# filters --------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_filters_by_key_speaker_and_tags(ctx: Context, conv: Bank, method: SearchMethod) -> None:
    def said(key: str, speaker: str, tags: list[str]) -> EntryIn:
        return EntryIn(key=key, speaker=speaker, tags=tags, content=f"refund request from {key}")

    e1, e2, e3, e4 = entries.write(
        ctx,
        conv,
        [
            said("alice", "ann", ["billing", "urgent"]),
            said("alice", "bob", ["billing"]),
            said("bob", "ann", ["urgent", "billing", "vip"]),
            said("carol", "cid", []),
        ],
    )

    def found(**filters: Any) -> set[str]:
        return set(_ids(ctx, conv, text="refund request", method=method, **filters))

    assert found() == {e1.id, e2.id, e3.id, e4.id}
    assert found(key="alice") == {e1.id, e2.id}
    assert found(speaker="ann") == {e1.id, e3.id}
    assert found(key="alice", speaker="ann") == {e1.id}
    assert found(tags=["billing"]) == {e1.id, e2.id, e3.id}
    assert found(tags=["billing", "urgent"]) == {e1.id, e3.id}
    assert found(tags=["urgent", "vip", "billing"]) == {e3.id}
    assert found(tags=["billing", "nope"]) == set()
    assert found(key="nobody") == set()


@pytest.mark.parametrize("method", METHODS)
def test_filters_by_time_window(
    ctx: Context, conv: Bank, clock: FixedClock, method: SearchMethod
) -> None:
    start = clock.now()
    written = []
    for day in range(3):
        written += entries.write(
            ctx, conv, [EntryIn(key="k", speaker="ann", content=f"shipping update day {day}")]
        )
        clock.advance(timedelta(days=1))
    d0, d1, d2 = (e.id for e in written)

    def found(**window: Any) -> set[str]:
        return set(_ids(ctx, conv, text="shipping update", method=method, **window))

    half = timedelta(hours=12)
    assert found(since=start + half) == {d1, d2}
    assert found(until=start + timedelta(days=1) + half) == {d0, d1}
    assert found(since=start + half, until=start + timedelta(days=1) + half) == {d1}
    assert found(since=start + timedelta(days=5)) == set()


def test_since_after_until_is_invalid(ctx: Context, conv: Bank, clock: FixedClock) -> None:
    now = clock.now()
    with pytest.raises(InvalidInput, match="since"):
        search.search(ctx, conv, SearchQuery(text="x", since=now, until=now - timedelta(days=1)))


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"key": ""}, "key must be 1-512 characters, not blank, got ''"),
        ({"speaker": "  "}, "speaker must be 1-200 characters, not blank"),
        ({"tags": ["ok", ""]}, "tag must be 1-64 characters, not blank"),
        ({"key": "k" * 600}, "key must be 1-512 characters, not blank, got 600 characters: 'kkk"),
        ({"key": "two\nlines"}, "key 'two\\nlines' holds a control character"),
    ],
)
def test_read_filters_no_write_accepts_are_refused(
    ctx: Context, conv: Bank, query: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInput) as raised:
        search.search(ctx, conv, SearchQuery(text="x", **query))
    assert str(raised.value).startswith(message)
    if "key" in query:
        with pytest.raises(InvalidInput, match=r"^key "):
            entries.load(ctx, conv, query["key"])


def test_a_speaker_filter_on_a_general_bank_is_refused(ctx: Context) -> None:
    notes = banks.create(ctx, BankCreate(name="notes", type="general"))
    entries.write(ctx, notes, [EntryIn(key="k", content="bob likes tea")])
    with pytest.raises(InvalidInput, match="general bank: entries have no speaker"):
        search.search(ctx, notes, SearchQuery(text="tea", speaker="bob"))


# escaping -------------------------------------------------------------------------------------

TRICKY_KEYS = [
    "x' OR '1'='1",
    "x",
    "it's",
    "back\\slash",
    "back\\\\slash",
    'double "quoted"',
    "100%",
    "1000",
    "a_b",
    "axb",
    "ключ-日本-🔑",
    "') OR true --",
]


def test_filter_values_are_literal(ctx: Context, conv: Bank) -> None:
    items = [
        EntryIn(key=key, speaker=key, tags=[key], content=f"secret note number {i}")
        for i, key in enumerate(TRICKY_KEYS)
    ]
    written = dict(zip(TRICKY_KEYS, entries.write(ctx, conv, items), strict=True))
    for key, entry in written.items():
        assert [e.id for e in entries.load(ctx, conv, key)] == [entry.id], key
        for method in METHODS:
            for field in ("key", "speaker"):
                query = {"text": "secret note", "method": method, field: key}
                assert _ids(ctx, conv, **query) == [entry.id], (key, method, field)
            tagged = _ids(ctx, conv, text="secret note", method=method, tags=[key])
            assert tagged == [entry.id], (key, method, "tags")


def test_injection_key_does_not_match_other_partitions(ctx: Context, conv: Bank) -> None:
    entries.write(ctx, conv, [EntryIn(key="x", speaker="ann", content="private to x")])
    entries.write(ctx, conv, [EntryIn(key="y", speaker="ann", content="private to y")])
    for method in METHODS:
        assert _ids(ctx, conv, text="private", key="x' OR '1'='1", method=method) == []
    assert entries.load(ctx, conv, "x' OR '1'='1") == []
    assert [e.key for e in entries.load(ctx, conv, "x")] == ["x"]


@pytest.mark.parametrize("bad", ["k\x00", "k\udc80"], ids=["nul", "surrogate"])
@pytest.mark.parametrize("field", ["key", "speaker", "tags"])
def test_unstorable_filter_value_is_invalid_input(
    ctx: Context, conv: Bank, field: str, bad: str
) -> None:
    entries.write(ctx, conv, [EntryIn(key="k", speaker="ann", content="hello")])
    value: Any = [bad] if field == "tags" else bad
    for method in METHODS:
        with pytest.raises(InvalidInput):
            search.search(ctx, conv, SearchQuery(text="hello", method=method, **{field: value}))


@pytest.mark.parametrize("text", ["x' OR '1'='1", '"unbalanced', "title:(", "*", "a AND"])
def test_query_text_with_syntax_characters_is_just_text(
    ctx: Context, conv: Bank, text: str
) -> None:
    entries.write(ctx, conv, [EntryIn(key="k", speaker="ann", content="plain words only")])
    for method in METHODS:
        hits = search.search(ctx, conv, SearchQuery(text=text, method=method))
        assert all(h.entry.key == "k" for h in hits)


# bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_query_is_invalid(ctx: Context, conv: Bank, text: str) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        search.search(ctx, conv, SearchQuery(text=text))


@pytest.mark.parametrize("k", [0, -1, search.MAX_K + 1])
def test_bad_k_is_invalid(ctx: Context, conv: Bank, k: int) -> None:
    with pytest.raises(InvalidInput, match="k must"):
        search.search(ctx, conv, SearchQuery(text="hello", k=k))


def test_search_of_an_empty_or_reset_bank_is_empty(ctx: Context, conv: Bank) -> None:
    for method in METHODS:
        assert _ids(ctx, conv, text="anything", method=method) == []
    entries.write(ctx, conv, [EntryIn(key="k", speaker="ann", content="anything at all")])
    banks.reset_source(ctx, conv.id)
    for method in METHODS:
        assert _ids(ctx, conv, text="anything", method=method) == []


# results do not depend on k -----------------------------------------------------------------

_COLOURS = ["red", "green", "blue", "amber", "violet"]
_THINGS = ["kite", "boat", "lamp", "drum", "coat", "bell"]
_PLACES = ["garden", "harbour", "attic", "market", "station"]
_QUERIES = [
    "red kite",
    "a blue boat in the harbour",
    "lamp",
    "violet drum at the station",
    "kite garden number 7",
    "who keeps an amber bell",
]


@pytest.fixture
def crowd(ctx: Context) -> Bank:
    """300 short entries from a small vocabulary: many equal full-text and vector scores."""
    bank = banks.create(ctx, BankCreate(name="crowd", type="general"))
    combos = [(c, t, p) for c in _COLOURS for t in _THINGS for p in _PLACES]
    contents = [f"{c} {t} in the {p} number {i}" for i, (c, t, p) in enumerate(combos)]
    contents += [f"the {p} keeps a {c} {t}" for c, t, p in combos]
    entries.write(ctx, bank, [EntryIn(key="k", content=text) for text in contents])
    return bank


def _run(ctx: Context, bank: Bank, text: str, k: int, method: SearchMethod) -> list[Any]:
    hits = search.search(ctx, bank, SearchQuery(text=text, k=k, method=method))
    return [(h.entry.id, h.score, h.chunk) for h in hits]


@pytest.mark.parametrize("method", METHODS)
def test_a_smaller_k_returns_the_first_hits_of_a_larger_k(
    ctx: Context, crowd: Bank, method: SearchMethod
) -> None:
    for text in _QUERIES:
        deep = _run(ctx, crowd, text, 300, method)
        assert len(deep) >= 40, text
        for k in (5, 20, 60):
            assert _run(ctx, crowd, text, k, method) == deep[:k], (text, k)


@pytest.mark.parametrize("method", METHODS)
def test_ties_are_ordered_by_entry_id(ctx: Context, crowd: Bank, method: SearchMethod) -> None:
    ties = 0
    for text in _QUERIES:
        for k in (5, 20, 300):
            hits = search.search(ctx, crowd, SearchQuery(text=text, k=k, method=method))
            for first, second in pairwise(hits):
                if first.score == second.score:
                    ties += 1
                    if method == "fts":  # the others break ties by raw cosine, then id
                        assert first.entry.id < second.entry.id, (text, k)
    assert ties > 0  # the bank does produce equal scores


@pytest.mark.parametrize("method", METHODS)
def test_identical_entries_come_back_in_a_fixed_order(
    ctx: Context, conv: Bank, method: SearchMethod
) -> None:
    # one key each: in one key a turn's index would also carry the (identical) turn before
    written = entries.write(
        ctx, conv, [EntryIn(key=f"k{n}", speaker="ann", content="tied note") for n in range(120)]
    )
    by_id = sorted(e.id for e in written)
    for k in (3, 10, 50, 120):
        hits = search.search(ctx, conv, SearchQuery(text="tied note", k=k, method=method))
        assert [h.entry.id for h in hits] == by_id[:k], k
        assert len({h.score for h in hits}) == 1
