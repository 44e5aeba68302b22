"""Search a bank: hybrid (vector + full-text) by default, with calibrated scores.

Results are entries, ranked by their best chunk. A hit's score is calibrated: it is a fixed
function of how close the entry is to the query, not scaled per query, so it means the same
for every query of a bank, and `min_score` drops weak hits (see `Calibration`):

- vector score: the cosine similarity mapped linearly from `cosine_floor` (0) to
  `cosine_full` (1), clipped to [0, 1];
- text score: 0 for an entry sharing no word with the query, else (`text_match` + its BM25
  score) / `bm25_unit`: at least 0.1 for any match (BM25 alone is tiny in a small bank),
  about 1 for a match on a few rare words; it has no upper bound;
- hybrid score: `vector_weight` x vector score + `text_weight` x text score.

An unrelated query scores about 0 (its best cosine stays under the floor and no word
matches); `DEFAULT_MIN_SCORE` drops such hits. Per-query min-max scaling, used before, gave
a nonsense query a top score of 1.0.

Hybrid scores are exact: each half is fetched to `Fetch.depth` entries (or k), an entry
found by one half only gets its other half's score (the vector score from the chunk vectors
the full-text half read, else by a query restricted to it; not at all when even that half's
bound leaves it below k entries already scored), and only entries that score above any
entry neither half returned are kept (deeper fetches follow when fewer than k are certain).
So a smaller k returns exactly the first hits of a larger k, with the same scores. Ties are
broken by the raw cosine similarity, then by entry id. The halves read a few fields of each
chunk (ids, scores, row ids); the hits' other fields are read for the hits alone.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memory import banks, rerank, validation
from memory.config import Mode
from memory.errors import InvalidInput
from memory.models import HIT_FIELDS, Bank, Entry, SearchHit, SearchQuery
from memory.search_carriers import carriers_after_their_turns
from memory.search_scores import (
    CALIBRATION,
    Calibration,
    Row,
    best_per_entry,
    chunk_vectors,
    kth_score,
    local_scores,
    matrix_of,
)
from memory.types.entry_filter import EntryFilter
from memory.types.fields import check_window

if TYPE_CHECKING:
    from memory.context import Context

MAX_K = 1000
OVERFETCH = 4
"""Chunk rows fetched per wanted entry, so entries with many matching chunks don't crowd out."""
FUSION_DEPTH = 40
"""Entries each half of a hybrid search fetches at least."""
DEFAULT_MIN_SCORE = 0.05
"""Hits scoring below this are dropped unless the query sets its own `min_score`: an entry
whose cosine similarity to the query is under about 0.3 and that shares no rare word."""
MAX_FETCH = 20_000
"""Most chunk rows one list fetches while looking for k distinct entries."""


@dataclass(frozen=True)
class Fetch:
    """How many chunk rows a search fetches at first (it fetches deeper when they fall short)."""

    single: int = 40
    """Fewest chunk rows a vector-only or full-text-only search fetches."""
    vector: int = 48
    """Fewest chunk rows the vector half of a hybrid search fetches."""
    fts: int = 96
    """Fewest chunk rows the full-text half of a hybrid search fetches (its scores tie often)."""
    depth: int = FUSION_DEPTH
    """Fewest entries each half of a hybrid search fetches (`OVERFETCH` chunk rows each)."""


_POOLS: dict[int, ThreadPoolExecutor] = {}


@dataclass
class Half:
    """One half of a search: its entries (best chunk each), certain as far as they go, and
    the raw score no entry beyond them beats (None: every matching entry is in `rows`)."""

    rows: list[Row]
    bound: float | None
    vectors: dict[str, Any] = field(default_factory=dict)
    """The chunk vectors (one row each) of the entries whose every chunk this half fetched,
    when it read them (the full-text half of hybrid): their vector score needs no query."""


VECTOR_RANK_FIELDS = ("id", "chunk", "chunk_count", "row")
"""What the vector half of a hybrid search reads of each chunk: enough to rank it; the
hits' other fields are read for the hits alone (`chunks_at`), not for every chunk ranked."""
TEXT_RANK_FIELDS = ("id", "chunk", "chunk_count", "row", "chunk_text", "carries", "chunk_vector")
"""What the full-text half reads: also what the carrier rule tests, and the chunk's vector,
so an entry the vector half missed is scored here, not by another query."""


def search(
    ctx: Context,
    bank: Bank,
    query: SearchQuery,
    *,
    fetch: Fetch = Fetch(),
    calibration: Calibration = CALIBRATION,
) -> list[SearchHit]:
    """Return the top-k entries for `query` scoring at least its `min_score`, best first.

    Args:
        ctx: the context whose store and embedder are searched.
        bank: the bank searched.
        query: the text, filters, k, method and minimum score (None: `DEFAULT_MIN_SCORE`).
        fetch: the first fetch's depth; the results do not depend on it (it is tuning).
        calibration: how raw relevance maps to scores.

    Returns:
        Up to k hits, best first, each with its calibrated score and best chunk. With a
        rerank model set (`Settings.rerank_model`), the model orders them (`memory.rerank`).

    Raises:
        InvalidInput: empty text, k out of range, a negative min_score, a bad time window,
            a filter value no entry can hold (blank, too long, NUL, invalid UTF-8), or a
            speaker filter on a general bank; an offline rerank model.
        ProviderError: the rerank model failed or gave no usable order.
    """
    if not query.text.strip():
        raise InvalidInput("search query is empty: give some text to search for")
    if not 1 <= query.k <= MAX_K:
        raise InvalidInput(f"k must be between 1 and {MAX_K}, got {query.k}")
    floor = DEFAULT_MIN_SCORE if query.min_score is None else query.min_score
    if not floor >= 0:
        raise InvalidInput(f"min_score must be 0 or more, got {query.min_score}")
    check_window(query.since, query.until)
    validation.check_filters(bank, key=query.key, speaker=query.speaker, tags=query.tags)
    reorder = rerank.reranker_for(ctx.settings)
    wanted = query if reorder is None else query.model_copy(update={"k": rerank.depth(query.k)})
    mode = banks.mode_of(bank)
    where = _filter_of(wanted)
    if wanted.method == "hybrid":
        top = _hybrid(ctx, bank, mode, wanted, where, fetch, calibration)
    else:
        half = _ranked(ctx, bank, mode, wanted.method, wanted, where, wanted.k, fetch.single)
        scale = calibration.vector if wanted.method == "vector" else calibration.text
        top = [{**row, "_score": scale(float(row["_score"]))} for row in half.rows]
    top = [row for row in top[: wanted.k] if row["_score"] >= floor]
    if wanted.method == "hybrid":
        top = _with_hit_fields(ctx, bank, top, wanted.key)
    _fill_content(ctx, bank, top)
    hits = [
        SearchHit(
            entry=Entry.from_fields(bank.id, row),
            score=float(row["_score"]),
            chunk=int(row["chunk"]),
            chunk_text=row["chunk_text"],
        )
        for row in top
    ]
    return hits if reorder is None else rerank.rerank(reorder, query.text, hits, query.k)


def _hybrid(
    ctx: Context,
    bank: Bank,
    mode: Mode,
    query: SearchQuery,
    where: EntryFilter,
    fetch: Fetch,
    calibration: Calibration,
) -> list[Row]:
    """Return the entries of both halves by exact hybrid score, as many as are certain."""
    need = max(query.k, fetch.depth)
    vector = None
    while True:
        # the full-text half runs while this thread embeds the query and runs the vector half
        # (LanceDB and onnxruntime free the GIL)
        text_job = _pool().submit(
            _ranked, ctx, bank, mode, "fts", query, where, need, fetch.fts, None, TEXT_RANK_FIELDS
        )
        if vector is None:
            vector = ctx.embedder(mode).embed([query.text])[0]
        vectors = _ranked(
            ctx, bank, mode, "vector", query, where, need, fetch.vector, vector, VECTOR_RANK_FIELDS
        )
        texts = text_job.result()
        fused = fuse(ctx, bank, query, where, vectors, texts, vector, calibration)
        if vectors.bound is None or len(fused) >= query.k or need >= MAX_FETCH:
            return fused
        need = min(need * OVERFETCH, MAX_FETCH)


def fuse(
    ctx: Context,
    bank: Bank,
    query: SearchQuery,
    where: EntryFilter,
    vectors: Half,
    texts: Half,
    vector: Any,
    calibration: Calibration = CALIBRATION,
) -> list[Row]:
    """Return the entries of both halves with exact hybrid scores, best first, cut where an
    entry neither half returned could rank higher; at least the first `query.k` are exact
    and complete (entries that cannot reach them may be left out).

    An entry one half lacks gets that half's raw score from the chunk vectors the full-text
    half read (all its chunks there), else by a query restricted to such entries (unless the
    half returned every match: then it has none there), unless even the best score it could
    have there (the half's bound) leaves it below `query.k` entries already scored.
    Each entry keeps the row (best chunk) of the vector half.
    """
    raw_vector = {row["id"]: float(row["_score"]) for row in vectors.rows}
    raw_text = {row["id"]: float(row["_score"]) for row in texts.rows}
    rows = {row["id"]: row for row in texts.rows} | {r["id"]: r for r in vectors.rows}
    raw_vector |= local_scores(texts.vectors, [e for e in rows if e not in raw_vector], vector)
    missing_vector = [e for e in rows if e not in raw_vector]
    missing_text = [e for e in rows if e not in raw_text] if texts.bound is not None else []
    unseen = (
        calibration.hybrid(vectors.bound, texts.bound),
        vectors.bound if vectors.bound is not None else -1.0,
    )
    complete = vectors.bound is None
    cut = kth_score(
        [e for e in rows if e not in missing_vector and e not in missing_text],
        raw_vector,
        raw_text,
        query.k,
        calibration,
        None if complete else unseen,
    )
    if cut is not None:  # drop the entries that cannot reach the first k, unscored
        dropped = {
            e
            for e in {*missing_vector, *missing_text}
            if (e in raw_vector or vectors.bound is not None)
            and calibration.hybrid(raw_vector.get(e, vectors.bound), raw_text.get(e, texts.bound))
            < cut
        }
        rows = {e: row for e, row in rows.items() if e not in dropped}
        missing_vector = [e for e in missing_vector if e not in dropped]
        missing_text = [e for e in missing_text if e not in dropped]
    text_job = (
        _pool().submit(_scores_of, ctx, bank, "fts", query, where, missing_text, rows, None)
        if missing_text
        else None
    )
    raw_vector |= _scores_of(ctx, bank, "vector", query, where, missing_vector, rows, vector)
    if text_job is not None:
        raw_text |= text_job.result()
    scored = [
        (calibration.hybrid(raw_vector.get(e), raw_text.get(e)), raw_vector.get(e, 0.0), e)
        for e in rows
    ]
    scored.sort(key=lambda s: (-s[0], -s[1], s[2]))
    return [
        {**rows[e], "_score": score}
        for score, raw, e in scored
        if complete or (score, raw) > unseen
    ]


def _scores_of(
    ctx: Context,
    bank: Bank,
    method: str,
    query: SearchQuery,
    where: EntryFilter,
    entry_ids: Sequence[str],
    rows: dict[str, Row],
    vector: Any,
) -> dict[str, float]:
    """Return the raw score, by one half, of the best chunk of each of `entry_ids` that
    matches there (a query restricted to those entries)."""
    if not entry_ids:
        return {}
    restricted = where.and_(ids=tuple(entry_ids))
    limit = sum(int(rows[e].get("chunk_count") or 1) for e in entry_ids)
    found = ctx.store.search_chunks(
        bank.id,
        method=method,
        vector=vector,
        text=query.text,
        flt=restricted,
        limit=limit,
        fields=["id", "chunk"],
    ).to_pylist()
    return {row["id"]: float(row["_score"]) for row in best_per_entry(found)}


def _pool() -> ThreadPoolExecutor:
    """Return this process's threads for the full-text half of hybrid.

    One pool per process id: a forked child inherits the pool object but not its threads.
    """
    pid = os.getpid()
    if pid not in _POOLS:
        _POOLS[pid] = ThreadPoolExecutor(max_workers=4, thread_name_prefix="membank-search")
    return _POOLS[pid]


def _filter_of(query: SearchQuery) -> EntryFilter:
    """Return the entry filter of the query's key, tags, speaker and time window (the
    labels were checked by `validation.check_filters`)."""
    return EntryFilter(
        keys=None if query.key is None else (query.key,),
        tags=tuple(query.tags),
        speaker=query.speaker,
        since=query.since,
        until=query.until,
    )


def _ranked(
    ctx: Context,
    bank: Bank,
    mode: Mode,
    method: str,
    query: SearchQuery,
    where: EntryFilter,
    need: int,
    fetch: int,
    vector: Any = None,
    fields: Sequence[str] | None = None,
) -> Half:
    """Return one row per entry (best chunk), by raw score then entry id, at least `need`
    if any, and the raw score of the last row fetched when rows remain beyond the fetch.

    The result is the same, as far as it goes, whatever `need` and however deep the fetch:
    when rows remain beyond the fetch, only entries scored above its last row are returned
    (the rows tied with the last one may have been cut off arbitrarily). Fetches `OVERFETCH`
    chunk rows per wanted entry, at least `fetch`, and fetches deeper while fewer than
    `need` entries are certain and rows remain, up to `MAX_FETCH` rows (past which the
    ranking is returned as it is). Reads `fields` of each chunk (None: `HIT_FIELDS`, and
    `carries` for full text); with `chunk_vector` among them, the half keeps the vectors.
    """
    if fields is None:
        fields = [*HIT_FIELDS, "carries"] if method == "fts" else list(HIT_FIELDS)
    if method == "vector" and vector is None:
        vector = ctx.embedder(mode).embed([query.text])[0]
    limit = max(need * OVERFETCH, fetch)
    while True:
        found = ctx.store.search_chunks(
            bank.id,
            method=method,
            vector=vector,
            text=query.text,
            flt=where,
            limit=limit,
            fields=fields,
        )
        matrix = None
        if "chunk_vector" in found.column_names:  # as one array: not a Python float each
            matrix = matrix_of(found.column("chunk_vector"))
            found = found.drop_columns(["chunk_vector"])
        rows = found.to_pylist()
        ranked = best_per_entry(rows)
        if method == "fts":
            ranked = carriers_after_their_turns(ranked, query.text)
        if len(rows) < limit:
            return Half(ranked, None, chunk_vectors(rows, matrix, ranked))
        cut = min(float(row["_score"]) for row in rows)
        certain = [row for row in ranked if float(row["_score"]) > cut]
        if len(certain) >= need or limit >= MAX_FETCH:
            return Half(certain, cut, chunk_vectors(rows, matrix, certain))
        limit = min(limit * OVERFETCH, MAX_FETCH)


def _with_hit_fields(ctx: Context, bank: Bank, rows: list[Row], key: str | None) -> list[Row]:
    """Return the hits `rows` (ranked by their chunks' few fields) with their chunks'
    `HIT_FIELDS`, read for these chunks alone; a hit whose entry is gone meanwhile is
    left out.

    What is known already is not read (each column costs a read per hit, ~0.25 ms for 10
    hits at 300k rows): the chunk count (both halves read it), the key the search filtered
    on, and the chunk text when every hit has it from the full-text half or is an entry of
    one chunk (whose text is the entry's).
    """
    if not rows:
        return rows
    known = {"chunk_count"} | ({"key"} if key is not None else set())
    if all("chunk_text" in r or int(r["chunk_count"]) == 1 for r in rows):
        known.add("chunk_text")
    fields = [f for f in HIT_FIELDS if f not in known]
    named = [(r["id"], int(r["chunk"]), r.get("row")) for r in rows]
    read = ctx.store.chunks_at(bank.id, named, fields=fields).to_pylist()
    found = {(r["id"], int(r["chunk"])): r for r in read}
    hits = []
    for r in rows:
        stored = found.get((r["id"], int(r["chunk"])))
        if stored is None:
            continue
        hit = {**stored, "chunk_count": r["chunk_count"], "_score": r["_score"]}
        if key is not None:
            hit["key"] = key
        if "chunk_text" not in hit:
            hit["chunk_text"] = r.get("chunk_text", hit["content"])
        hits.append(hit)
    return hits


def _fill_content(ctx: Context, bank: Bank, rows: list[Row]) -> None:
    """Put the whole entry text on hits whose best chunk is not chunk 0."""
    missing = [r["id"] for r in rows if r.get("content") is None]
    if not missing:
        return
    table = ctx.store.entry_table(
        bank.id, EntryFilter(ids=tuple(missing)), fields=["id", "content"]
    )
    ids, texts = table.column("id").to_pylist(), table.column("content").to_pylist()
    content = dict(zip(ids, texts, strict=True))
    for row in rows:
        if row.get("content") is None:
            row["content"] = content.get(row["id"], row["chunk_text"])
