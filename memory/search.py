"""Search a bank: hybrid (vector + full-text, fused by relative score) by default.

Results are entries, ranked by their best chunk. Hybrid runs the vector and the full-text
query with the same filters and fuses the two lists by relative score: each list's scores
are min-max normalised to [0, 1] and averaged (an entry missing from a list gets 0 there).
Unlike reciprocal-rank fusion, this keeps how far ahead a list's best hit is, so a confident
match in one list is not diluted by the other list's guesses (on LoCoMo, RRF with the usual
k=60 fell below BM25 alone).

Results do not depend on k: a smaller k returns exactly the first k hits of a larger k, with
the same scores. For that, each list is normalised over a fixed depth, not over however many
rows k made it fetch: its top score maps to 1 and the score of its `FUSION_DEPTH`-th entry
(its last, if it has fewer) to 0, lower scores clip to 0. Each list is ranked by score, then
entry id; a fetch only trusts entries scored above the last row it returned (rows tied with
that one may have been cut off arbitrarily) and fetches deeper until enough are trusted.
Fused ties (in practice the 0-scored tail) are broken by the entry's best rank in either
list, then by entry id. Entry ids are random, so id order is arbitrary but fixed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory import banks, validation
from memory.config import Mode
from memory.entries import entry_from_row
from memory.errors import InvalidInput
from memory.models import Bank, SearchHit, SearchQuery
from memory.store import filters
from memory.store.schema import ENTRY_COLUMNS

if TYPE_CHECKING:
    from memory.context import Context

MAX_K = 1000
OVERFETCH = 4
"""Chunk rows fetched per wanted entry, so entries with many matching chunks don't crowd out."""
FUSION_DEPTH = 40
"""Hybrid normalises each list between its top score and the score at this entry rank."""


@dataclass(frozen=True)
class Fetch:
    """How many chunk rows a search fetches at first (it fetches deeper when they fall short)."""

    single: int = 40
    """Fewest chunk rows a vector-only or full-text-only search fetches."""
    vector: int = 48
    """Fewest chunk rows the vector list of a hybrid search fetches: `FUSION_DEPTH` entries
    and a margin for ties at the cut, so one fetch usually suffices."""
    fts: int = 96
    """Fewest chunk rows the full-text list of a hybrid search fetches (its scores tie often)."""


MAX_FETCH = 20_000
"""Most chunk rows one list fetches while looking for k distinct entries."""
WEIGHTS = (0.5, 0.5)
"""Weights of the vector and the full-text list in hybrid fusion: equal, untuned."""

Row = dict[str, Any]
_POOLS: dict[int, ThreadPoolExecutor] = {}


def search(
    ctx: Context, bank: Bank, query: SearchQuery, *, fetch: Fetch = Fetch()
) -> list[SearchHit]:
    """Return the top-k entries for `query`, best first, each with its best chunk.

    Args:
        ctx: the context whose store and embedder are searched.
        bank: the bank searched.
        query: the text, filters, k and method.
        fetch: the first fetch's depth; the results do not depend on it (it is tuning).

    Returns:
        Up to k hits, best first.

    Raises:
        InvalidInput: empty text, k out of range, a bad time window, a filter value no
            entry can hold (blank, too long, NUL, invalid UTF-8), or a speaker filter on a
            general bank.
    """
    if not query.text.strip():
        raise InvalidInput("search query is empty: give some text to search for")
    if not 1 <= query.k <= MAX_K:
        raise InvalidInput(f"k must be between 1 and {MAX_K}, got {query.k}")
    if query.since and query.until and query.since >= query.until:
        raise InvalidInput("--since must be before --until")
    validation.check_filters(bank, key=query.key, speaker=query.speaker, tags=query.tags)
    mode = banks.mode_of(bank)
    where = _where(query)
    if query.method == "hybrid":
        # the full-text query runs while this thread embeds the query and runs the vector one
        need = max(query.k, FUSION_DEPTH)
        text_rows = _pool().submit(_ranked, ctx, bank, mode, "fts", query, where, need, fetch.fts)
        vector_rows = _ranked(ctx, bank, mode, "vector", query, where, need, fetch.vector)
        rankings = [vector_rows, text_rows.result()]
        top = fuse_scores(rankings, WEIGHTS, depth=FUSION_DEPTH)[: query.k]
    else:
        top = _ranked(ctx, bank, mode, query.method, query, where, query.k, fetch.single)
        top = top[: query.k]
    _fill_content(ctx, bank, top)
    return [
        SearchHit(
            entry=entry_from_row(bank.id, row),
            score=float(row["_score"]),
            chunk_index=int(row["chunk_index"]),
            chunk_text=row["text"],
        )
        for row in top
    ]


def _pool() -> ThreadPoolExecutor:
    """Return this process's threads for the full-text half of hybrid (LanceDB frees the GIL).

    One pool per process id: a forked child inherits the pool object but not its threads.
    """
    pid = os.getpid()
    if pid not in _POOLS:
        _POOLS[pid] = ThreadPoolExecutor(max_workers=4, thread_name_prefix="membank-search")
    return _POOLS[pid]


def _where(query: SearchQuery) -> str | None:
    """Return the storage filter of the query's key, tags, speaker and time window (the
    labels were checked by `validation.check_filters`)."""
    return filters.entry_filter(
        key=query.key, tags=query.tags, speaker=query.speaker, since=query.since, until=query.until
    )


def _ranked(
    ctx: Context,
    bank: Bank,
    mode: Mode,
    method: str,
    query: SearchQuery,
    where: str | None,
    need: int,
    fetch: int,
) -> list[Row]:
    """Return one row per entry (best chunk), by score then entry id, at least `need` if any.

    The result is the same, as far as it goes, whatever `need` and however deep the fetch:
    when rows remain beyond the fetch, only entries scored above its last row are returned
    (the rows tied with the last one may have been cut off arbitrarily). Fetches `OVERFETCH`
    chunk rows per wanted entry, at least `fetch`, and fetches deeper while fewer than
    `need` entries are certain and rows remain, up to `MAX_FETCH` rows (past which the
    ranking is returned as it is).
    """
    vector = ctx.embedder(mode).embed([query.text])[0] if method == "vector" else None
    limit = max(query.k * OVERFETCH, fetch)
    while True:
        rows = ctx.store.search(
            bank.id,
            method=method,
            vector=vector,
            text=query.text,
            where=where,
            limit=limit,
            columns=ENTRY_COLUMNS,
        ).to_pylist()
        ranked = best_per_entry(rows)
        if len(rows) < limit or limit >= MAX_FETCH:
            return ranked
        cut = min(float(row["_score"]) for row in rows)
        certain = [row for row in ranked if float(row["_score"]) > cut]
        if len(certain) >= need:
            return certain
        limit = min(limit * OVERFETCH, MAX_FETCH)


def best_per_entry(rows: Sequence[Row]) -> list[Row]:
    """Return one row per entry (its best-scoring chunk), by score then entry id."""
    best: dict[str, Row] = {}
    for row in sorted(rows, key=lambda r: (-float(r["_score"]), r.get("chunk_index", 0))):
        best.setdefault(row["entry_id"], row)
    return sorted(best.values(), key=lambda r: (-float(r["_score"]), r["entry_id"]))


def normalise(scores: Sequence[float], depth: int | None = None) -> list[float]:
    """Return scores scaled to [0, 1] between the top score and the `depth`-th highest.

    Scores at or below the `depth`-th highest (the lowest, when `depth` is None or beyond
    the scores) map to 0; all map to 1.0 when the top and the floor are equal.
    """
    if not scores:
        return []
    ordered = sorted(scores, reverse=True)
    high = ordered[0]
    low = ordered[-1] if depth is None else ordered[min(depth, len(ordered)) - 1]
    if high <= low:
        return [1.0 if s >= high else 0.0 for s in scores]
    return [max(0.0, (s - low) / (high - low)) for s in scores]


def fuse_scores(
    rankings: Sequence[Sequence[Row]],
    weights: Sequence[float] | None = None,
    depth: int | None = None,
) -> list[Row]:
    """Return entries ranked by relative score fusion of several rankings.

    Each ranking's `_score`s are normalised to [0, 1] over its top `depth` entries (see
    `normalise`); an entry's fused `_score` is the weighted mean of its normalised scores
    (0 in a ranking that lacks it), in [0, 1]. Each entry keeps the row (best chunk) of the
    first ranking that has it. Ties are broken by the entry's best (lowest) rank in any
    ranking, then by entry id, so a ranking cut deeper only adds entries after the ones a
    shallower cut returned (given each ranking is at least `depth` deep or complete).
    """
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("give one weight per ranking")
    total = sum(weights) or 1.0
    scores: dict[str, float] = {}
    ranks: dict[str, int] = {}
    rows: dict[str, Row] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        scaled = normalise([float(row["_score"]) for row in ranking], depth)
        for rank, (row, value) in enumerate(zip(ranking, scaled, strict=True)):
            entry_id = row["entry_id"]
            scores[entry_id] = scores.get(entry_id, 0.0) + weight * value / total
            ranks[entry_id] = min(rank, ranks.get(entry_id, rank))
            rows.setdefault(entry_id, row)
    order = sorted(scores, key=lambda e: (-scores[e], ranks[e], e))
    return [{**rows[e], "_score": scores[e]} for e in order]


def _fill_content(ctx: Context, bank: Bank, rows: list[Row]) -> None:
    """Put the whole entry text on hits whose best chunk is not chunk 0."""
    missing = [r["entry_id"] for r in rows if r.get("content") is None]
    if not missing:
        return
    where = filters.conjoin("chunk_index = 0", filters.one_of("entry_id", missing))
    table = ctx.store.scan(bank.id, columns=["entry_id", "content"], where=where)
    ids, texts = table.column("entry_id").to_pylist(), table.column("content").to_pylist()
    content = dict(zip(ids, texts, strict=True))
    for row in rows:
        if row.get("content") is None:
            row["content"] = content.get(row["entry_id"], row["text"])
