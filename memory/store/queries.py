"""Vector and full-text queries on an entries table, with one relevance column `_score`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from memory.errors import InvalidInput
from memory.store import term_weights, vector_index
from memory.store.indices import FTS_COLUMN, fts_has_positions

PHRASE_WITHOUT_POSITIONS = (
    "this bank's full-text index was built without word positions, so a quoted "
    "phrase cannot be searched yet: run `membank maintain BANK` once to rebuild "
    "it, or search without the quotes"
)


def run(
    table: Any,
    method: str,
    vector: np.ndarray[Any, Any] | None,
    text: str | None,
    where: str | None,
    limit: int,
    columns: Sequence[str],
    *,
    nprobes: int = 0,
) -> pa.Table:
    """Return up to `limit` rows of `columns` ranked by cosine distance or BM25, prefiltered.

    A vector search with no `where` uses the table's vector index when it has one, visiting
    `nprobes` partitions (0: never); any other vector search is exact (`vector_index`).

    Raises:
        ValueError: `method` is neither `vector` nor `fts`.
        InvalidInput: a quoted phrase on a table whose full-text index was built without
            token positions (made before phrases were supported): `membank maintain` fixes it.
    """
    wanted = list(columns)
    if method == "vector":
        query = table.search(vector, query_type="vector").distance_type("cosine")
        approximate = nprobes > 0 and not where
        query = vector_index.tune(query, approximate=approximate, nprobes=nprobes)
        wanted.append("_distance")
    elif method == "fts":
        if text and '"' in text and not fts_has_positions(table):
            raise InvalidInput(PHRASE_WITHOUT_POSITIONS)
        query = table.search(text, query_type="fts", fts_columns=FTS_COLUMN)
        wanted.append("_score")
    else:
        raise ValueError(f"unknown search method {method!r}: use vector or fts")
    if where:
        query = query.where(where, prefilter=True)
    result: pa.Table = query.select(wanted).limit(limit).to_arrow()
    return result


def run_on_dataset(
    dataset: Any,
    method: str,
    vector: np.ndarray[Any, Any] | None,
    text: str | None,
    where: str | None,
    limit: int,
    columns: Sequence[str],
    *,
    nprobes: int = 0,
    has_positions: Callable[[], bool] = lambda: True,
    scope: tuple[str, ...] | None = None,
    key_statistics_rows: int = 0,
) -> pa.Table:
    """Return what `run` returns, by a scan of the Lance dataset of the version searched
    (`columns` may include `_rowoffset`: the rows' positions in that version).

    The same engine query as `run` without LanceDB's per-query work in Python (a schema
    read or two and an event-loop round trip a query: ~3 ms of 10-15 at 100k rows,
    bench/RESULTS.md "store24 (session 14)"). `has_positions` says whether the full-text
    index keeps word positions (asked only for a quoted phrase). A full-text search with a
    `scope` (keys) weighs its words by the scope's statistics in a table of at most
    `key_statistics_rows` rows (`term_weights`).

    Raises:
        ValueError: `method` is neither `vector` nor `fts`.
        InvalidInput: a quoted phrase on an index without positions (as `run`).
    """
    relevance = "_distance" if method == "vector" else "_score"  # asked for: else a warning
    options: dict[str, Any] = {"columns": [*columns, relevance]}
    if where:
        options |= {"filter": where, "prefilter": True}
    if method == "vector":
        approximate = nprobes > 0 and not where
        nearest: dict[str, Any] = {"column": "vector", "q": vector, "k": limit, "metric": "cosine"}
        nearest |= {"use_index": approximate} | ({"nprobes": nprobes} if approximate else {})
        options["nearest"] = nearest
    elif method == "fts":
        if text and '"' in text and not has_positions():
            raise InvalidInput(PHRASE_WITHOUT_POSITIONS)
        weighted = term_weights.weighted_query(dataset, text, scope, key_statistics_rows)
        plain = {"query": text, "columns": [FTS_COLUMN]}
        options |= {"full_text_query": plain if weighted is None else weighted, "limit": limit}
    else:
        raise ValueError(f"unknown search method {method!r}: use vector or fts")
    result: pa.Table = dataset.to_table(**options)
    return result.select([*columns, relevance])


def with_score(result: pa.Table) -> pa.Table:
    """Return `result` with `_score` (higher is better) in place of `_distance`."""
    names = result.column_names
    if "_distance" in names:
        distance = np.asarray(result.column("_distance").to_numpy(zero_copy_only=False))
        score = pa.array(1.0 - distance / 2.0, pa.float32())
    elif "_score" in names:
        return result
    else:
        score = pa.array(np.zeros(result.num_rows, np.float32))
    drop = [n for n in ("_distance", "_score") if n in names]
    return result.drop_columns(drop).append_column("_score", score)
