"""A key's full-text search is scored by the key's BM25 statistics, not the index's: another
key's rows do not reorder it, whether or not its rows are in the full-text index yet; the
counts are of the indexed rows and kept until rows are folded in."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa
import pytest

from memory import banks, entries, search
from memory.context import Context
from memory.models import Bank, BankCreate, EntryIn, SearchQuery
from memory.store import term_weights
from memory.store.indices import FTS_COLUMN, FTS_CONFIG, FTS_INDEX
from memory.store.lance import LanceStore
from memory.store.segments import StoreTuning

MINE = ["apple pie recipe", "pear tart", "apple juice", "banana bread"]
"""Key a: "apple" in two rows, "pear" in one: in this key a pear is the rarer word."""
THEIRS = [f"pear number {n}" for n in range(50)]
"""Key b: pears everywhere, which makes "pear" the common word of the table."""


def _store(ctx: Context, **values: int) -> None:
    ctx.store = LanceStore(ctx.store.uri, tuning=StoreTuning(reindex_every=1, **values))


def _ranked(ctx: Context, bank: Bank, method: str = "fts") -> list[tuple[str, float]]:
    query = SearchQuery(text="apple pear", key="a", method=method, k=5, min_score=0.0)  # type: ignore[arg-type]
    return [(h.entry.content, h.score) for h in search.search(ctx, bank, query)]


@pytest.mark.parametrize("bank_type", ["general", "conversation"])
def test_another_keys_rows_do_not_reorder_a_keys_full_text_search(
    ctx: Context, bank_type: str
) -> None:
    _store(ctx)  # every write folds its rows into the index: the table's statistics apply
    bank = banks.create(ctx, BankCreate(name="b", type=bank_type))  # type: ignore[arg-type]
    ann, bob = ("ann", "bob") if bank_type == "conversation" else (None, None)
    entries.write(ctx, bank, [EntryIn(key="a", speaker=ann, content=t) for t in MINE])
    alone = _ranked(ctx, bank)
    entries.write(ctx, bank, [EntryIn(key="b", speaker=bob, content=t) for t in THEIRS])
    crowded = _ranked(ctx, bank)

    assert [c for c, _ in crowded] == [c for c, _ in alone]
    assert alone[0][0] == "pear tart"
    for (_, before), (_, after) in zip(alone, crowded, strict=True):
        assert after == pytest.approx(before, rel=0.15)  # the table's average length moved


def test_with_key_statistics_off_the_tables_statistics_reorder_it(ctx: Context) -> None:
    _store(ctx, key_statistics_rows=0)
    bank = banks.create(ctx, BankCreate(name="b", type="general"))
    entries.write(ctx, bank, [EntryIn(key="a", content=t) for t in MINE])
    entries.write(ctx, bank, [EntryIn(key="b", content=t) for t in THEIRS])

    assert _ranked(ctx, bank)[0][0] != "pear tart"  # what the weights correct


def test_a_table_past_the_bound_keeps_the_tables_statistics(ctx: Context) -> None:
    _store(ctx, key_statistics_rows=20)
    bank = banks.create(ctx, BankCreate(name="b", type="general"))
    entries.write(ctx, bank, [EntryIn(key="a", content=t) for t in MINE])
    entries.write(ctx, bank, [EntryIn(key="b", content=t) for t in THEIRS])

    assert _ranked(ctx, bank)[0][0] != "pear tart"


def test_hybrid_search_uses_the_keys_statistics_too(ctx: Context) -> None:
    _store(ctx)
    bank = banks.create(ctx, BankCreate(name="b", type="general"))
    entries.write(ctx, bank, [EntryIn(key="a", content=t) for t in MINE])
    alone = _ranked(ctx, bank, "hybrid")
    entries.write(ctx, bank, [EntryIn(key="b", content=t) for t in THEIRS])

    assert [c for c, _ in _ranked(ctx, bank, "hybrid")] == [c for c, _ in alone]


def test_a_quote_in_the_key_is_escaped_in_the_scope(ctx: Context) -> None:
    _store(ctx)
    bank = banks.create(ctx, BankCreate(name="b", type="general"))
    key = "x' OR '1'='1"
    entries.write(ctx, bank, [EntryIn(key=key, content="apple pie")])
    entries.write(ctx, bank, [EntryIn(key="b", content=t) for t in THEIRS])
    query = SearchQuery(text="apple pear", key=key, method="fts", k=5, min_score=0.0)

    assert [h.entry.content for h in search.search(ctx, bank, query)] == ["apple pie"]


def test_words_and_idf() -> None:
    assert term_weights.words_of("Apple, apple PIE? snake_case 3rd") == [
        "apple",
        "pie",
        "snake",
        "case",
        "3rd",
    ]
    assert term_weights.idf(1, 4) == pytest.approx(math.log(1 + 3.5 / 1.5))
    assert term_weights.idf(1, 100) > term_weights.idf(50, 100)


def _indexed_table(tmp_path: Path, rows: dict[str, list[str]]) -> Any:
    db = lancedb.connect(str(tmp_path / "db"))
    table = db.create_table("t", _rows(rows))
    table.create_index(FTS_COLUMN, config=FTS_CONFIG, name=FTS_INDEX)
    return table


def _rows(rows: dict[str, list[str]]) -> pa.Table:
    pairs = [(key, text) for key, texts in rows.items() for text in texts]
    return pa.table({"key": [k for k, _ in pairs], FTS_COLUMN: [t for _, t in pairs]})


def _plain_scores(table: Any) -> list[float]:
    found = table.to_lance().to_table(
        columns=[FTS_COLUMN],
        full_text_query={"query": "apple pear", "columns": [FTS_COLUMN]},
        filter="key = 'a'",
        prefilter=True,
        with_row_id=True,
    )
    rows = zip(found["_rowid"].to_pylist(), found["_score"].to_pylist(), strict=True)
    return [score for _, score in sorted(rows)]


def test_counts_are_of_the_indexed_rows_and_kept_until_a_fold(tmp_path: Path) -> None:
    table = _indexed_table(tmp_path, {"a": MINE})
    counts = term_weights.index_counts(table.to_lance())
    assert counts is not None
    assert (counts.rows, counts.by_key) == (4, {"a": 4})

    scores = _plain_scores(table)
    table.add(_rows({"b": THEIRS}))  # unindexed: LanceDB's statistics have not moved
    unfolded = table.to_lance()
    assert _plain_scores(table) == scores  # what keeping the counts until a fold relies on
    assert term_weights.index_counts(unfolded) is counts
    assert term_weights.weighted_query(unfolded, "apple pear", ("a",), 1_000) is not None
    assert counts.words == {"apple": {"a": 2}, "pear": {"a": 1}}

    table.optimize()  # folded: a new index state, counted afresh
    folded = term_weights.index_counts(table.to_lance())
    assert folded is not None and folded is not counts
    assert (folded.rows, folded.by_key) == (54, {"a": 4, "b": 50})


def test_a_key_with_no_indexed_row_keeps_the_index_statistics(tmp_path: Path) -> None:
    table = _indexed_table(tmp_path, {"b": THEIRS})
    table.add(_rows({"a": MINE}))

    assert term_weights.weighted_query(table.to_lance(), "apple pear", ("a",), 1_000) is None
