"""Search a bank: hybrid (vector + full-text, fused by relative score) by default.

Results are entries, ranked by their best chunk. Hybrid runs the vector and the full-text
query with the same filters and fuses the two lists by relative score: each list's scores
are min-max normalised to [0, 1] and averaged (an entry missing from a list gets 0 there).
Unlike reciprocal-rank fusion, this keeps how far ahead a list's best hit is, so a confident
match in one list is not diluted by the other list's guesses (on LoCoMo, RRF with the usual
k=60 fell below BM25 alone). `fuse` (RRF) stays available.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from memory.config import Mode, get_mode
from memory.context import Context
from memory.entries import entry_from_row
from memory.errors import InvalidInput
from memory.models import Bank, SearchHit, SearchQuery
from memory.store import filters
from memory.store.schema import ENTRY_COLUMNS

MAX_K = 1000
OVERFETCH = 4
"""Chunk rows fetched per wanted entry, so entries with many matching chunks don't crowd out."""
MIN_FETCH = 40
"""Fewest chunk rows fetched per list: the candidates that fusion normalises over."""
MAX_FETCH = 20_000
"""Most chunk rows one list fetches while looking for k distinct entries."""
RRF_K = 60
"""Rank offset of reciprocal-rank fusion (the usual 60)."""
WEIGHTS = (0.5, 0.5)
"""Weights of the vector and the full-text list in hybrid fusion: equal, untuned."""

Row = dict[str, Any]
_POOLS: dict[int, ThreadPoolExecutor] = {}


def search(ctx: Context, bank: Bank, query: SearchQuery) -> list[SearchHit]:
    """Return the top-k entries for `query`, best first, each with its best chunk.

    Raises:
        InvalidInput: empty text, k out of range, a bad time window, or a filter value
            that cannot be stored (NUL, invalid UTF-8).
    """
    if not query.text.strip():
        raise InvalidInput("search query is empty: give some text to search for")
    if not 1 <= query.k <= MAX_K:
        raise InvalidInput(f"k must be between 1 and {MAX_K}, got {query.k}")
    if query.since and query.until and query.since >= query.until:
        raise InvalidInput("--since must be before --until")
    mode = get_mode(bank.mode)
    where = _where(query)
    if query.method == "hybrid":
        # the full-text query runs while this thread embeds the query and runs the vector one
        text_rows = _pool().submit(_ranked, ctx, bank, mode, "fts", query, where)
        vector_rows = _ranked(ctx, bank, mode, "vector", query, where)
        top = fuse_scores([vector_rows, text_rows.result()], WEIGHTS)[: query.k]
    else:
        top = _ranked(ctx, bank, mode, query.method, query, where)[: query.k]
    _fill_content(ctx, bank, mode.dims, top)
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
    try:
        return filters.entry_filter(
            key=query.key,
            tags=query.tags,
            speaker=query.speaker,
            since=query.since,
            until=query.until,
        )
    except ValueError as exc:
        raise InvalidInput(
            f"bad search filter: {exc}; no stored key, speaker or tag can contain it"
        ) from exc


def _ranked(
    ctx: Context, bank: Bank, mode: Mode, method: str, query: SearchQuery, where: str | None
) -> list[Row]:
    """Return one row per entry (best chunk), best first, with at least k entries if any.

    Fetches `OVERFETCH` chunk rows per wanted entry and, when the chunks of a few long
    entries fill the whole fetch, fetches deeper until k entries appear or rows run out.
    """
    vector = ctx.embedder(mode).embed([query.text])[0] if method == "vector" else None
    limit = max(query.k * OVERFETCH, MIN_FETCH)
    while True:
        rows = ctx.store.search(
            bank.id,
            mode.dims,
            method=method,
            vector=vector,
            text=query.text,
            where=where,
            limit=limit,
            columns=ENTRY_COLUMNS,
        ).to_pylist()
        ranked = best_per_entry(rows)
        if len(ranked) >= query.k or len(rows) < limit or limit >= MAX_FETCH:
            return ranked
        limit = min(limit * OVERFETCH, MAX_FETCH)


def best_per_entry(rows: Sequence[Row]) -> list[Row]:
    """Return one row per entry (its best-scoring chunk), best first."""
    best: dict[str, Row] = {}
    for row in sorted(rows, key=lambda r: -float(r["_score"])):
        best.setdefault(row["entry_id"], row)
    return list(best.values())


def normalise(scores: Sequence[float]) -> list[float]:
    """Return scores min-max scaled to [0, 1] (all 1.0 when they are equal)."""
    if not scores:
        return []
    low, high = min(scores), max(scores)
    if high <= low:
        return [1.0] * len(scores)
    return [(s - low) / (high - low) for s in scores]


def fuse_scores(
    rankings: Sequence[Sequence[Row]], weights: Sequence[float] | None = None
) -> list[Row]:
    """Return entries ranked by relative score fusion of several rankings.

    Each ranking's `_score`s are min-max normalised to [0, 1]; an entry's fused `_score` is
    the weighted mean of its normalised scores (0 in a ranking that lacks it), in [0, 1].
    Each entry keeps the row (best chunk) of the first ranking that has it; ties keep
    first-seen order.
    """
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("give one weight per ranking")
    total = sum(weights) or 1.0
    scores: dict[str, float] = {}
    rows: dict[str, Row] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        scaled = normalise([float(row["_score"]) for row in ranking])
        for row, value in zip(ranking, scaled, strict=True):
            entry_id = row["entry_id"]
            scores[entry_id] = scores.get(entry_id, 0.0) + weight * value / total
            rows.setdefault(entry_id, row)
    order = sorted(scores, key=lambda e: -scores[e])
    return [{**rows[e], "_score": scores[e]} for e in order]


def fuse(rankings: Sequence[Sequence[Row]], k: int = RRF_K) -> list[Row]:
    """Return entries ranked by reciprocal-rank fusion of several rankings (score = RRF sum)."""
    scores: dict[str, float] = {}
    rows: dict[str, Row] = {}
    for ranking in rankings:
        for rank, row in enumerate(ranking):
            entry_id = row["entry_id"]
            scores[entry_id] = scores.get(entry_id, 0.0) + 1.0 / (k + rank + 1)
            rows.setdefault(entry_id, row)
    order = sorted(scores, key=lambda e: -scores[e])
    return [{**rows[e], "_score": scores[e]} for e in order]


def _fill_content(ctx: Context, bank: Bank, dims: int, rows: list[Row]) -> None:
    """Put the whole entry text on hits whose best chunk is not chunk 0."""
    missing = [r["entry_id"] for r in rows if r.get("content") is None]
    if not missing:
        return
    where = filters.conjoin("chunk_index = 0", filters.one_of("entry_id", missing))
    table = ctx.store.scan(bank.id, dims, columns=["entry_id", "content"], where=where)
    ids, texts = table.column("entry_id").to_pylist(), table.column("content").to_pylist()
    content = dict(zip(ids, texts, strict=True))
    for row in rows:
        if row.get("content") is None:
            row["content"] = content.get(row["entry_id"], row["text"])
