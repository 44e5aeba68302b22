"""Hybrid fusion and ranking (pure), and the store behaviour search relies on (real LanceDB)."""

from __future__ import annotations

from typing import Any

import lancedb
import pyarrow as pa
import pytest
from lancedb.index import FTS

from memory import banks, entries, search
from memory.context import Context
from memory.models import Bank, BankCreate, EntryIn, SearchQuery
from memory.store import StoreTuning, filters
from memory.store import lance as lance_store
from memory.store.schema import ENTRY_COLUMNS, entries_schema, index_text


def _rows(*pairs: tuple[str, float]) -> list[dict[str, Any]]:
    return [{"entry_id": entry_id, "_score": score, "text": entry_id} for entry_id, score in pairs]


def _order(rows: list[dict[str, Any]]) -> list[str]:
    return [row["entry_id"] for row in rows]


# pure fusion ------------------------------------------------------------------------------


def test_normalise_scales_to_unit_range() -> None:
    assert search.normalise([]) == []
    assert search.normalise([3.0, 3.0]) == [1.0, 1.0]
    assert search.normalise([10.0, 5.0, 0.0]) == [1.0, 0.5, 0.0]


def test_fuse_scores_is_a_weighted_mean_of_normalised_scores() -> None:
    vector = _rows(("a", 0.9), ("b", 0.5), ("c", 0.1))
    text = _rows(("a", 12.0), ("d", 6.0), ("b", 0.0))
    fused = search.fuse_scores([vector, text])
    scores = {row["entry_id"]: row["_score"] for row in fused}
    assert _order(fused) == ["a", "b", "d", "c"]
    assert scores == pytest.approx({"a": 1.0, "b": 0.25, "d": 0.25, "c": 0.0})
    assert all(0.0 <= s <= 1.0 for s in scores.values())
    assert len(fused) == len(set(_order(fused)))


def test_fuse_scores_keeps_the_first_rankings_row_and_honours_weights() -> None:
    vector = [{"entry_id": "a", "_score": 0.8, "text": "chunk from vector"}]
    text = [{"entry_id": "a", "_score": 3.0, "text": "chunk from text"}]
    (row,) = search.fuse_scores([vector, text])
    assert row["text"] == "chunk from vector" and row["_score"] == pytest.approx(1.0)

    first = _rows(("x", 1.0), ("y", 0.0))
    second = _rows(("y", 1.0), ("x", 0.0))
    assert _order(search.fuse_scores([first, second], [1.0, 0.0])) == ["x", "y"]
    assert _order(search.fuse_scores([first, second], [0.0, 1.0])) == ["y", "x"]
    with pytest.raises(ValueError, match="one weight per ranking"):
        search.fuse_scores([first, second], [1.0])


def test_relative_fusion_keeps_a_decisive_lead_that_rank_fusion_drops() -> None:
    """x is far ahead in the vector list and absent from the text list: ranks flatten that."""
    vector = _rows(("x", 0.90), ("y", 0.30), ("z", 0.29), ("w", 0.28))
    text = _rows(("y", 5.0), ("z", 4.9), ("w", 1.0))
    fused = search.fuse_scores([vector, text])
    assert _order(fused)[:2] == ["y", "x"]  # reciprocal-rank fusion puts x last of the four
    assert fused[1]["_score"] == pytest.approx(0.5)


def test_best_per_entry_keeps_each_entrys_best_chunk() -> None:
    rows = [
        {"entry_id": "a", "_score": 0.2, "chunk_index": 0},
        {"entry_id": "b", "_score": 0.5, "chunk_index": 0},
        {"entry_id": "a", "_score": 0.9, "chunk_index": 3},
    ]
    best = search.best_per_entry(rows)
    assert [(r["entry_id"], r["chunk_index"]) for r in best] == [("a", 3), ("b", 0)]


def test_unencodable_filter_values_are_rejected_before_the_engine() -> None:
    with pytest.raises(ValueError, match="UTF-8"):
        filters.literal("k\udc80")
    with pytest.raises(ValueError, match="NUL"):
        filters.literal("k\x00")


# real LanceDB ----------------------------------------------------------------------------


@pytest.fixture
def conv(ctx: Context) -> Bank:
    return banks.create(ctx, BankCreate(name="conv", type="conversation"))


def test_index_text_puts_the_speaker_first() -> None:
    assert index_text("Caroline", "I went to the group") == "Caroline: I went to the group"
    assert index_text(None, "a fact") == "a fact"


def test_full_text_search_knows_who_said_it(ctx: Context, conv: Bank) -> None:
    caroline, melanie = entries.write(
        ctx,
        conv,
        [
            EntryIn(key="k", speaker="Caroline", content="I went to a support group yesterday"),
            EntryIn(key="k", speaker="Melanie", content="I went to a pottery class yesterday"),
        ],
    )
    hits = search.search(ctx, conv, SearchQuery(text="Caroline", method="fts"))
    assert [h.entry.id for h in hits] == [caroline.id]
    hits = search.search(ctx, conv, SearchQuery(text="what did Melanie do yesterday", k=2))
    assert hits[0].entry.id == melanie.id
    # the speaker is only indexed: content, chunk text and reads stay the turn's own words
    assert hits[0].entry.content == hits[0].chunk_text == "I went to a pottery class yesterday"
    stored = ctx.store.scan(conv.id, columns=["text", "search_text"]).to_pylist()
    assert {r["search_text"] for r in stored} == {
        "Caroline: I went to a support group yesterday",
        "Melanie: I went to a pottery class yesterday",
    }
    assert "search_text" not in ENTRY_COLUMNS


def test_general_entries_are_indexed_by_their_text(ctx: Context) -> None:
    bank = banks.create(ctx, BankCreate(name="gen", type="general"))
    entries.write(ctx, bank, [EntryIn(key="k", content="prefers window seats")])
    stored = ctx.store.scan(bank.id, columns=["search_text"]).to_pylist()
    assert stored == [{"search_text": "prefers window seats"}]


def test_hybrid_finds_k_entries_when_long_entries_fill_the_fetch(ctx: Context) -> None:
    shallow = search.Fetch(single=1, vector=1, fts=1)
    bank = banks.create(ctx, BankCreate(name="g", type="general", mode="accurate"))
    written = entries.write(
        ctx,
        bank,
        [EntryIn(key="k", content=" ".join([f"apple orchard {i}"] * 300)) for i in range(3)]
        + [EntryIn(key="k", content="apple pie")],
    )
    for method in ("hybrid", "vector", "fts"):
        query = SearchQuery(text="apple orchard", k=4, method=method)
        hits = search.search(ctx, bank, query, fetch=shallow)
        assert {h.entry.id for h in hits} == {e.id for e in written}, method


def _unindexed_fragments(table: Any) -> int:
    dataset = table.to_lance()
    indexed = {
        fragment
        for index in dataset.describe_indices()
        if index.name == "key_idx"
        for segment in index.segments
        for fragment in segment.fragment_ids
    }
    return sum(1 for f in dataset.get_fragments() if f.fragment_id not in indexed)


def test_single_writes_are_folded_into_the_indices(ctx: Context, conv: Bank) -> None:
    ctx.store = lance_store.LanceStore(
        ctx.store.uri, tuning=StoreTuning(loose_fragments=4, index_segments=3)
    )
    for i in range(13):
        entries.write(ctx, conv, [EntryIn(key=f"k{i % 2}", speaker="ann", content=f"note {i}")])
        table = ctx.store.entries_table(conv.id)
        assert _unindexed_fragments(table) < 4
    assert table.index_stats("key_idx").num_indices < 3
    ctx.store.maintain(conv.id)
    table = ctx.store.entries_table(conv.id)
    assert table.index_stats("key_idx").num_indices == 1
    assert table.index_stats("text_idx").num_unindexed_rows == 0
    assert len(table.to_lance().get_fragments()) == 1
    hits = search.search(ctx, conv, SearchQuery(text="note 12", key="k0", method="fts"))
    assert hits[0].entry.content == "note 12"
    assert len(entries.load(ctx, conv, "k1")) == 6


def test_a_table_made_before_search_text_is_upgraded_on_open(ctx: Context, conv: Bank) -> None:
    ctx.store.drop_entries_table(conv.id)
    old = pa.schema([f for f in entries_schema(384) if f.name != "search_text"])
    db = lancedb.connect(ctx.store.uri)
    table = db.create_table(lance_store.entries_table_name(conv.id), schema=old)
    table.create_index("text", config=FTS(), name="text_idx")
    fresh = lance_store.LanceStore(ctx.store.uri)
    ctx.store = fresh
    entries.write(ctx, conv, [EntryIn(key="k", speaker="Ann", content="tulips in spring")])
    table = fresh.entries_table(conv.id)
    assert "search_text" in table.schema.names
    assert {i.name: i.columns for i in table.list_indices()}["text_idx"] == ["search_text"]
    hits = search.search(ctx, conv, SearchQuery(text="Ann tulips", method="fts"))
    assert [h.entry.content for h in hits] == ["tulips in spring"]


def test_normalise_over_a_fixed_depth_clips_below_it() -> None:
    assert search.normalise([10.0, 5.0, 0.0], depth=2) == [1.0, 0.0, 0.0]
    assert search.normalise([10.0, 7.5, 5.0, 1.0], depth=3) == [1.0, 0.5, 0.0, 0.0]
    assert search.normalise([10.0, 5.0, 0.0], depth=10) == [1.0, 0.5, 0.0]
    assert search.normalise([4.0, 4.0, 1.0], depth=2) == [1.0, 1.0, 0.0]


def test_fused_scores_do_not_depend_on_how_deep_the_rankings_go() -> None:
    """A ranking cut deeper (as a larger k fetches) adds entries after, never reorders."""
    vector = _rows(*[(f"v{i:03}", 1.0 - i / 200) for i in range(150)])
    text = _rows(*[(f"t{i:03}", 20.0 - (i // 5)) for i in range(100)])  # ties of five
    text += _rows(*[(f"v{i:03}", 1.0) for i in range(0, 150, 7)])
    text.sort(key=lambda r: -r["_score"])
    depth = 10
    full = search.fuse_scores([vector, text], depth=depth)
    for cut in (depth, 25, 60):
        fused = search.fuse_scores([vector[:cut], text[:cut]], depth=depth)
        assert fused[:cut] == full[:cut], cut
    # equal fused scores: best rank in either ranking first, then entry id
    assert _order(full)[:4] == ["t000", "v000", "t001", "t002"]
