"""Per-word weights that score a key's full-text search by the key's BM25 statistics (issue 24).

LanceDB scores every row of a full-text search, indexed or not, with the statistics of the
rows its full-text index holds, whatever the filter (rows written since the last fold move no
score: bench/RESULTS.md "recall24", tests/test_search_key_statistics.py). So a word rare in
the index but common in one key (a conversation's speaker names) weighs as much in that key
as a word rare in the key, and one key's folded rows move another key's scores. Each query
word gets a boost `idf_key(w) / idf_index(w)` (`idf(n, rows) = ln(1 + (rows - n + 0.5) / (n +
0.5))`, n the rows holding the word), so the index's BM25 becomes the key's up to length
normalisation (the index's average length stays).

Both sides are counted over the indexed rows, and remembered per index state (the dataset and
its full-text index segments, which change only when rows are folded in: every
`StoreTuning.reindex_every` rows, or a prune): the rows per key once per state, and for each
word the rows holding it by key (one index-only query, `fast_search`, the first time the
word is asked in that state). A search then costs no query for words asked before. What
this leaves out: a key's rows written since the last fold (at most `reindex_every` rows)
enter its statistics only once folded, and rows deleted since the fold leave them at once
while LanceDB keeps counting them until the index is rebuilt; a key with no indexed row
keeps the index's statistics, as before. Not applied (the index's statistics) to a table of
more than `StoreTuning.key_statistics_rows` rows (a first-asked word reads its whole
posting list, 161 ms for a word in every row of 300k), a phrase, more than `MAX_WORDS`
words, or a table with no full-text index (LanceDB then scores the filtered rows by their
own statistics).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from lance.query import BooleanQuery, FullTextQuery, MatchQuery, Occur

from memory.store.indices import FTS_COLUMN, FTS_INDEX

_WORD = re.compile(r"[^\W_]+")
"""A word as LanceDB's simple tokenizer splits text (runs of letters and digits)."""
MAX_WORDS = 12
"""Most distinct query words weighted; a longer query keeps the index's statistics."""
STATES_REMEMBERED = 64
"""Index states (dataset and full-text index segments) whose counts are kept; past it the
memo starts again."""
WORDS_REMEMBERED = 20_000
"""Words whose counts one index state keeps; past it a new word is counted each time."""


def words_of(text: str) -> list[str]:
    """Return the distinct words of a query, lower-cased, in order."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))


def idf(matching: int, rows: int) -> float:
    """Return BM25's inverse document frequency of a word in `matching` of `rows` rows."""
    return math.log(1.0 + (rows - matching + 0.5) / (matching + 0.5))


@dataclass
class IndexCounts:
    """Row counts of the rows one state of a full-text index holds."""

    rows: int
    """Rows the index holds (LanceDB's document count)."""
    by_key: dict[str, int]
    """Indexed rows per key."""
    words: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per word asked so far: indexed rows holding it, per key (whole-entry assignments only,
    so concurrent searches at worst count a word twice)."""


def weighted_query(
    dataset: Any, text: str | None, keys: tuple[str, ...] | None, max_rows: int
) -> Any | None:
    """Return a full-text query of `text` whose words are boosted to the statistics of the
    indexed rows of `keys`, or None to search `text` as it is (no keys, a phrase, a long
    query, more than `max_rows` rows, no indexed row of the keys, no word in the index)."""
    if not text or not keys or '"' in text or max_rows <= 0:
        return None
    words = words_of(text)
    if not words or len(words) > MAX_WORDS or dataset.count_rows() > max_rows:
        return None
    counts = index_counts(dataset)
    scoped = 0 if counts is None else sum(counts.by_key.get(k, 0) for k in keys)
    if counts is None or not scoped:
        return None
    clauses: list[tuple[Occur, FullTextQuery]] = []
    for word in words:
        by_key = _word_counts(dataset, counts, word)
        holding = sum(by_key.values())
        if not holding:  # a stop word, or in no indexed row: no part in any score
            continue
        within = sum(by_key.get(k, 0) for k in keys)
        boost = idf(within, scoped) / idf(holding, counts.rows)
        clauses.append((Occur.SHOULD, MatchQuery(word, FTS_COLUMN, boost=boost)))
    return BooleanQuery(clauses) if clauses else None


_STATES: dict[tuple[str, tuple[str, ...]], IndexCounts] = {}


def index_counts(dataset: Any) -> IndexCounts | None:
    """Return the counts of the rows the dataset's full-text index holds, remembered by
    index state (None: no full-text index)."""
    index = next((i for i in dataset.describe_indices() if i.name == FTS_INDEX), None)
    if index is None:
        return None
    state = (str(dataset.uri), tuple(str(s.uuid) for s in index.segments))
    counts = _STATES.get(state)
    if counts is None:
        counts = IndexCounts(int(index.num_rows_indexed), _rows_by_key(dataset, index))
        if len(_STATES) >= STATES_REMEMBERED:
            _STATES.clear()
        _STATES[state] = counts
    return counts


def _rows_by_key(dataset: Any, index: Any) -> dict[str, int]:
    """Return the rows per key of the fragments the index covers."""
    ids = sorted({int(i) for segment in index.segments for i in segment.fragment_ids})
    fragments = [f for f in (dataset.get_fragment(i) for i in ids) if f is not None]
    if not fragments:
        return {}
    keys = dataset.scanner(columns=["key"], fragments=fragments).to_table().column("key")
    return _tally(keys)


def _word_counts(dataset: Any, counts: IndexCounts, word: str) -> dict[str, int]:
    """Return the indexed rows holding `word` (as the index tokenizes it), per key."""
    known = counts.words.get(word)
    if known is not None:
        return known
    found: pa.Table = dataset.to_table(
        columns=["key"],
        full_text_query=MatchQuery(word, FTS_COLUMN),
        limit=max(counts.rows, 1),
        fast_search=True,  # the index only: the rows whose statistics LanceDB scores with
        disable_scoring_autoprojection=True,
    )
    tally = _tally(found.column("key"))
    if len(counts.words) < WORDS_REMEMBERED:
        counts.words[word] = tally
    return tally


def _tally(keys: Any) -> dict[str, int]:
    """Return how many times each key occurs in a column of keys."""
    counted = pc.value_counts(keys).to_pylist() if len(keys) else []
    return {str(c["values"]): int(c["counts"]) for c in counted}
