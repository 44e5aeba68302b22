"""Per-word weights that score a key's full-text search by the key's BM25 statistics (issue 24).

LanceDB scores indexed rows with the whole table's BM25 statistics, whatever the filter: a
word rare in the table but common in one key (a conversation's speaker names) weighs as
much in that key as a word rare in the key, and one key's writes move another key's scores.
Each query word gets a boost `idf_key(w) / idf_table(w)` (`idf(n, rows) = ln(1 + (rows - n +
0.5) / (n + 0.5))`, n the rows holding the word), so the table's BM25 becomes the key's up to
length normalisation (the table's average length stays).

The counts cost two full-text queries a word; the table-wide one reads the word's whole
posting list (161 ms for a word in every row of 300k, bench/RESULTS.md "recall24"), so a
table of more than `StoreTuning.key_statistics_rows` rows keeps the table's statistics, as
before. A table with no indexed row needs none: LanceDB scores unindexed rows by the
filtered rows' statistics.
"""

from __future__ import annotations

import math
import re
from typing import Any

from lance.query import BooleanQuery, FullTextQuery, MatchQuery, Occur

from memory.store.indices import FTS_COLUMN, FTS_INDEX

_WORD = re.compile(r"[^\W_]+")
"""A word as LanceDB's simple tokenizer splits text (runs of letters and digits)."""
MAX_WORDS = 12
"""Most distinct query words weighted; a longer query keeps the table's statistics."""


def words_of(text: str) -> list[str]:
    """Return the distinct words of a query, lower-cased, in order."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))


def idf(matching: int, rows: int) -> float:
    """Return BM25's inverse document frequency of a word in `matching` of `rows` rows."""
    return math.log(1.0 + (rows - matching + 0.5) / (matching + 0.5))


def weighted_query(dataset: Any, text: str | None, scope: str | None, max_rows: int) -> Any | None:
    """Return a full-text query of `text` whose words are boosted to the statistics of the
    rows `scope` selects (a key), or None to search `text` as it is (no scope, a phrase, a
    long query, more than `max_rows` rows, no indexed row, no word found in the table)."""
    if not text or not scope or '"' in text or max_rows <= 0:
        return None
    words = words_of(text)
    if not words or len(words) > MAX_WORDS:
        return None
    rows = dataset.count_rows()
    if rows > max_rows or not _indexed_rows(dataset):
        return None
    scoped = dataset.count_rows(scope)
    clauses: list[tuple[Occur, FullTextQuery]] = []
    for word in words:
        everywhere = _matching(dataset, word, None, rows)
        if not everywhere:  # a stop word, or in no row: no part in any score
            continue
        boost = idf(_matching(dataset, word, scope, rows), scoped) / idf(everywhere, rows)
        clauses.append((Occur.SHOULD, MatchQuery(word, FTS_COLUMN, boost=boost)))
    return BooleanQuery(clauses) if clauses else None


def _indexed_rows(dataset: Any) -> int:
    """Return how many rows the full-text index holds (0: none, or no index)."""
    if FTS_INDEX not in {i.name for i in dataset.describe_indices()}:
        return 0
    return int(dataset.stats.index_stats(FTS_INDEX).get("num_indexed_rows", 0))


def _matching(dataset: Any, word: str, scope: str | None, rows: int) -> int:
    """Return how many rows (of `scope`, None: all) hold `word` as the index tokenizes it."""
    options: dict[str, Any] = {"filter": scope, "prefilter": True} if scope else {}
    found = dataset.to_table(
        columns=[],
        with_row_id=True,
        full_text_query=MatchQuery(word, FTS_COLUMN),
        limit=max(rows, 1),
        disable_scoring_autoprojection=True,
        **options,
    )
    return int(found.num_rows)
