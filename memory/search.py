"""Search a bank: hybrid (vector + full-text, fused by reciprocal rank) by default.

Results are entries, ranked by their best chunk. Hybrid runs the vector and the full-text
query with the same filters and fuses the two rankings (RRF), so either signal can surface
an entry the other misses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory.config import get_mode
from memory.context import Context
from memory.entries import entry_from_row
from memory.errors import InvalidInput
from memory.models import Bank, SearchHit, SearchQuery
from memory.store import filters
from memory.store.schema import ENTRY_COLUMNS

MAX_K = 1000
OVERFETCH = 4
"""Chunk rows fetched per wanted entry, so entries with many matching chunks don't crowd out."""
RRF_K = 60
"""Rank offset of reciprocal-rank fusion (the usual 60)."""

Row = dict[str, Any]


def search(ctx: Context, bank: Bank, query: SearchQuery) -> list[SearchHit]:
    """Return the top-k entries for `query`, best first, each with its best chunk."""
    if not query.text.strip():
        raise InvalidInput("search query is empty: give some text to search for")
    if not 1 <= query.k <= MAX_K:
        raise InvalidInput(f"k must be between 1 and {MAX_K}, got {query.k}")
    if query.since and query.until and query.since >= query.until:
        raise InvalidInput("--since must be before --until")
    mode = get_mode(bank.mode)
    where = filters.entry_filter(
        key=query.key,
        tags=query.tags,
        speaker=query.speaker,
        since=query.since,
        until=query.until,
    )
    limit = query.k * OVERFETCH

    def ranked(method: str) -> list[Row]:
        vector = ctx.embedder(mode).embed([query.text])[0] if method == "vector" else None
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
        return best_per_entry(rows)

    if query.method == "hybrid":
        top = fuse([ranked("vector"), ranked("fts")])[: query.k]
    else:
        top = ranked(query.method)[: query.k]
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


def best_per_entry(rows: Sequence[Row]) -> list[Row]:
    """Return one row per entry (its best-scoring chunk), best first."""
    best: dict[str, Row] = {}
    for row in sorted(rows, key=lambda r: -float(r["_score"])):
        best.setdefault(row["entry_id"], row)
    return list(best.values())


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
