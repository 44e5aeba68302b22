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
from memory.store import filters
from memory.store import lance as lance_store
from memory.store.schema import ENTRY_COLUMNS, entries_schema, index_text
from memory.store.segments import StoreTuning


def _rows(*pairs: tuple[str, float]) -> list[dict[str, Any]]:
    return [{"entry_id": entry_id, "_score": score, "text": entry_id} for entry_id, score in pairs]


def _order(rows: list[dict[str, Any]]) -> list[str]:
    return [row["entry_id"] for row in rows]


# pure fusion ------------------------------------------------------------------------------


def test_calibrated_scores_are_fixed_functions_of_raw_relevance() -> None:
    cal = search.Calibration()
    # the store's vector `_score` is (1 + cosine) / 2
    assert cal.vector((1 + 0.25) / 2) == 0.0 and cal.vector((1 + 0.65) / 2) == pytest.approx(1.0)
    assert cal.vector((1 + 0.45) / 2) == pytest.approx(0.5)
    assert cal.vector(0.0) == 0.0 and cal.vector(1.0) == 1.0  # clipped
    assert cal.text(0.0) == pytest.approx(0.1)  # any matching word counts
    assert cal.text(9.0) == pytest.approx(1.0)
    assert cal.hybrid(None, None) == 0.0
    assert cal.hybrid((1 + 0.65) / 2, None) == pytest.approx(0.35)
    assert cal.hybrid(None, 9.0) == pytest.approx(0.65)
    assert cal.hybrid((1 + 0.45) / 2, 4.0) == pytest.approx(0.35 * 0.5 + 0.65 * 0.5)


def test_a_score_does_not_depend_on_the_other_hits_of_its_query(ctx: Context) -> None:
    """Min-max scaling gave every query's best hit 1.0; a calibrated score is the entry's own."""
    bank = banks.create(ctx, BankCreate(name="g", type="general"))
    tulip, _ = entries.write(
        ctx,
        bank,
        [EntryIn(key="k", content="tulips bloom in spring"), EntryIn(key="k", content="oak")],
    )
    alone = search.search(ctx, bank, SearchQuery(text="tulips", min_score=0.0))
    entries.write(ctx, bank, [EntryIn(key="k", content="tulips tulips tulips bloom")])
    crowded = search.search(ctx, bank, SearchQuery(text="tulips", min_score=0.0))
    assert alone[0].entry.id == tulip.id and alone[0].score < 1.0
    assert crowded[0].entry.id != tulip.id  # a stronger match now leads ...
    # ... and the first entry's score changed only through BM25's corpus statistics
    again = {h.entry.id: h.score for h in crowded}[tulip.id]
    assert again == pytest.approx(alone[0].score, abs=0.05)


def test_best_per_entry_keeps_each_entrys_best_chunk() -> None:
    rows = [
        {"id": "a", "_score": 0.2, "chunk": 0},
        {"id": "b", "_score": 0.5, "chunk": 0},
        {"id": "a", "_score": 0.9, "chunk": 3},
    ]
    best = search.best_per_entry(rows)
    assert [(r["id"], r["chunk"]) for r in best] == [("a", 3), ("b", 0)]


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
    stored = ctx.store.index_documents(conv.id).to_pylist()  # type: ignore[attr-defined]
    assert {r["search_text"] for r in stored} == {
        "1 November 2026\nCaroline: I went to a support group yesterday",
        "1 November 2026\nMelanie: I went to a pottery class yesterday"
        "\x1eI went to a support group yesterday",  # the turn before (test_search_neighbours)
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
    old = pa.schema([f for f in entries_schema(384) if f.name not in ("search_text", "context_id")])
    db = lancedb.connect(ctx.store.uri)
    table = db.create_table(lance_store.entries_table_name(conv.id), schema=old)
    table.create_index("text", config=FTS(), name="text_idx")
    fresh = lance_store.LanceStore(ctx.store.uri)
    ctx.store = fresh
    entries.write(ctx, conv, [EntryIn(key="k", speaker="Ann", content="tulips in spring")])
    table = fresh.entries_table(conv.id)
    assert {"search_text", "context_id"} <= set(table.schema.names)
    assert {i.name: i.columns for i in table.list_indices()}["text_idx"] == ["search_text"]
    hits = search.search(ctx, conv, SearchQuery(text="Ann tulips", method="fts"))
    assert [h.entry.content for h in hits] == ["tulips in spring"]
