"""Per-word weights that score a key's full-text search by the key's BM25 statistics (issue 24).

LanceDB scores indexed rows with the whole table's BM25 statistics, whatever the filter: a
word rare in the table but common in one key (a conversation's speaker names) weighs as
much in that key as a word rare in the key, and one key's writes move another key's scores.
Each query word gets a boost `idf_key(w) / idf_table(w)` (`idf(n, rows) = ln(1 + (rows - n +
0.5) / (n + 0.5))`, n the rows holding the word), so the table's BM25 becomes the key's up to
length normalisation (the table's average length stays).

The counts cost a full-text query a word over the whole table (the rows holding it, and
how many are the key's), which reads the word's whole posting list (161 ms for a word in
every row of 300k, bench/RESULTS.md "recall24"), so a table of more than
`StoreTuning.key_statistics_rows` rows keeps the table's statistics, as before; the boosts
are remembered by table version, keys and words. A table with no indexed row needs none:
LanceDB scores unindexed rows by the filtered rows' statistics.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from lance.query import BooleanQuery, FullTextQuery, MatchQuery, Occur

from memory.store import filters
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


def weighted_query(
    dataset: Any, text: str | None, keys: tuple[str, ...] | None, max_rows: int
) -> Any | None:
    """Return a full-text query of `text` whose words are boosted to the statistics of the
    rows of `keys`, or None to search `text` as it is (no keys, a phrase, a long query, more
    than `max_rows` rows, no indexed row, no word found in the table)."""
    if not text or not keys or '"' in text or max_rows <= 0:
        return None
    words = words_of(text)
    if not words or len(words) > MAX_WORDS:
        return None
    rows = dataset.count_rows()
    if rows > max_rows:
        return None
    memo = (dataset.uri, dataset.version, keys, tuple(words))
    if memo not in _BOOSTS:
        if len(_BOOSTS) >= MEMO_SIZE:
            _BOOSTS.clear()
        _BOOSTS[memo] = _boosts(dataset, words, keys, rows)
    boosts = _BOOSTS[memo]
    if not boosts:
        return None
    clauses: list[tuple[Occur, FullTextQuery]] = [
        (Occur.SHOULD, MatchQuery(word, FTS_COLUMN, boost=boost)) for word, boost in boosts
    ]
    return BooleanQuery(clauses)


MEMO_SIZE = 256
"""Boosts remembered (by table version, keys and words): a hybrid search asks again for the
entries one half missed, and deeper fetches repeat the query."""
_BOOSTS: dict[tuple[Any, ...], list[tuple[str, float]]] = {}


def _boosts(
    dataset: Any, words: list[str], keys: tuple[str, ...], rows: int
) -> list[tuple[str, float]]:
    """Return each word found in the table with its boost (none: no indexed row)."""
    if not _indexed_rows(dataset):
        return []
    scoped = dataset.count_rows(filters.one_of("key", list(keys)))
    wanted = pa.array(keys, pa.string())
    boosts = []
    for word in words:
        found = _matching(dataset, word, rows)
        if not found.num_rows:  # a stop word, or in no row: no part in any score
            continue
        within = int(pc.sum(pc.is_in(found.column("key"), wanted)).as_py() or 0)
        boosts.append((word, idf(within, scoped) / idf(found.num_rows, rows)))
    return boosts


def _indexed_rows(dataset: Any) -> int:
    """Return how many rows the full-text index holds (0: none, or no index)."""
    if FTS_INDEX not in {i.name for i in dataset.describe_indices()}:
        return 0
    return int(dataset.stats.index_stats(FTS_INDEX).get("num_indexed_rows", 0))


def _matching(dataset: Any, word: str, rows: int) -> pa.Table:
    """Return the `key` of every row holding `word` as the index tokenizes it."""
    found: pa.Table = dataset.to_table(
        columns=["key"],
        full_text_query=MatchQuery(word, FTS_COLUMN),
        limit=max(rows, 1),
        disable_scoring_autoprojection=True,
    )
    return found
