"""Hybrid search ranks on narrow chunk rows and reads its hits' fields afterwards, by row
position (`EntryStore.chunks_at`): the hits are whole, and a position made stale by a
compaction or a deletion in between never yields another entry's fields (real LanceDB)."""

from __future__ import annotations

import json

from memory import banks, entries, search
from memory.context import Context
from memory.models import HIT_FIELDS, BankCreate, EntryIn, SearchQuery
from memory.store import filters
from memory.store.lance import LanceStore


def _bank(ctx: Context, count: int = 12) -> tuple[str, list[str]]:
    bank = banks.create(ctx, BankCreate(name="g", type="general"))
    written = entries.write(
        ctx,
        bank,
        [
            EntryIn(
                key="k",
                content=f"note {i} about the harbour ferry timetable",
                tags=[f"t{i}"],
                metadata={"n": i},
            )
            for i in range(count)
        ],
    )
    return bank.id, [e.id for e in written]


def test_hybrid_hits_carry_every_field_of_their_entry(ctx: Context) -> None:
    _, ids = _bank(ctx)
    bank = banks.get(ctx, "g")
    hits = search.search(ctx, bank, SearchQuery(text="harbour ferry", k=5, min_score=0))
    assert len(hits) == 5
    for hit in hits:
        n = ids.index(hit.entry.id)
        assert hit.entry.content == f"note {n} about the harbour ferry timetable"
        assert hit.entry.tags == [f"t{n}"] and hit.entry.metadata == {"n": n}
        assert hit.chunk_text == hit.entry.content and hit.entry.key == "k"


def test_hits_of_a_key_filtered_search_have_their_chunk_and_key(ctx: Context) -> None:
    """What a hybrid search does not read again (the key it filtered on, the text of a
    one-chunk entry) is still right on every hit, long entries included."""
    bank = banks.create(ctx, BankCreate(name="g", type="general", mode="fast"))
    long = " ".join(f"harbour{i % 7} ferry leg {i} of the timetable" for i in range(120))
    items = [EntryIn(key="k", content=long), EntryIn(key="other", content=long)]
    items += [EntryIn(key="k", content=f"harbour ferry note {i}") for i in range(6)]
    entries.write(ctx, bank, items)
    stored = ctx.store.scan(bank.id, where=filters.equals("key", "k")).to_pylist()
    chunks = {(r["entry_id"], r["chunk_index"]): r for r in stored}
    assert max(r["chunk_count"] for r in stored) > 2
    query = SearchQuery(text="harbour3 ferry leg timetable", key="k", k=10, min_score=0)
    hits = search.search(ctx, bank, query)
    assert len(hits) == 7 and {h.entry.key for h in hits} == {"k"}
    for hit in hits:
        row = chunks[(hit.entry.id, hit.chunk)]
        assert hit.chunk_text == row["text"]
        assert hit.entry.content == (long if row["chunk_count"] > 1 else row["content"])


def test_chunks_at_finds_chunks_whose_row_ids_went_stale(ctx: Context) -> None:
    bank_id, ids = _bank(ctx)
    store = ctx.store
    assert isinstance(store, LanceStore)
    found = store.search_chunks(
        bank_id, method="fts", vector=None, text="harbour", limit=50, fields=["id", "chunk", "row"]
    ).to_pylist()
    named = [(r["id"], r["chunk"], r["row"]) for r in found]
    fresh = store.chunks_at(bank_id, named, fields=HIT_FIELDS).to_pylist()
    assert [r["id"] for r in fresh] == [r["id"] for r in found]  # in the order asked
    # a deletion and its prune rewrite the fragment: the old row ids now name other rows
    gone = ids[0]
    store.delete_where(bank_id, f"entry_id = '{gone}'")
    later = store.chunks_at(bank_id, named, fields=HIT_FIELDS).to_pylist()
    expected = [r["id"] for r in found if r["id"] != gone]
    assert [r["id"] for r in later] == expected
    for row in later:
        n = ids.index(row["id"])
        assert row["content"] == f"note {n} about the harbour ferry timetable"
        assert json.loads(row["metadata"]) == {"n": n}
    # no row id at all: looked up by entry id
    bare = store.chunks_at(bank_id, [(ids[3], 0, None)], fields=["id", "content"]).to_pylist()
    assert bare == [{"id": ids[3], "content": "note 3 about the harbour ferry timetable"}]
