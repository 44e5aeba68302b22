"""Search latency with a key filter at 100k entries: membank `search.search` vs raw LanceDB.

Usage: python bench/search.py [--entries 100000] [--keys 1000] [--queries 200] [--k 10]
                              [--rounds 3] [--neighbours]

One bank's table gets `--entries` one-chunk entries over `--keys` keys (random unit vectors,
random words from a Zipf-distributed vocabulary), inserted through `LanceStore.add_rows` in
one batch (which builds the key and full-text indices); with `--neighbours` each row's
full-text text also carries the row before it in its key, as a conversation turn's does
since issue 14 (compare with a run of the code before it, without the flag). Queries: a
random key each and a few words of one of that key's entries; the query vector is
precomputed, and membank gets it from `LookupEmbedder` (a dict lookup), so no embedding
cost is measured on either side.

Measured in the same run, on the same table, in interleaved order (round robin, `--rounds`
passes over the queries; p50/p95 over every query of every round):
- membank vector: `search.search(ctx, bank, SearchQuery(method="vector", key=K, k=k))`
- raw vector: `table.search(vec).distance_type("cosine").where("key = 'K'", prefilter=True)
  .select(columns + ["_distance"]).limit(k).to_arrow()`
- membank hybrid: `search.search(..., method="hybrid")`
- raw hybrid: LanceDB's native hybrid query, `table.search(query_type="hybrid",
  fts_columns="search_text").vector(vec).text(text).where("key = 'K'", prefilter=True)
  .select(columns).limit(k).to_arrow()`. The raw vector query selects `_distance`
  explicitly (otherwise every raw query logs a deprecation warning and is slowed); the
  hybrid builder accepts only table columns in `select` (lancedb 0.40: "No field named
  _distance") and adds `_relevance_score` itself, without a warning.
Target: membank hybrid p95 at most 1.2x the native hybrid query. The last line of stdout is
a JSON object: `ratio` is membank hybrid p95 / native hybrid p95 (`ratios`: each p50/p95).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import lancedb
import numpy as np
import pyarrow as pa

from memory import banks, search
from memory.config import Mode
from memory.context import Context
from memory.models import BankCreate, SearchQuery
from memory.ports import Embedder, Vectors
from memory.store import filters
from memory.store.lance import LanceStore, entries_table_name
from memory.store.schema import (
    CONTEXT_COLUMN,
    CONTEXT_SEPARATOR,
    DERIVED_COLUMNS,
    ENTRY_COLUMNS,
    entries_schema,
)

DIMS = 384
VOCABULARY = 5_000
WORDS_PER_ENTRY = 20


class LookupEmbedder:
    """Returns precomputed vectors by text: a dict lookup per query."""

    name = "bench/lookup"
    dims = DIMS

    def __init__(self, vectors: dict[str, np.ndarray[Any, Any]]) -> None:
        self._vectors = vectors

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return the stored vector of each text."""
        return np.stack([self._vectors[t] for t in texts]).astype(np.float32)


def unit(rng: np.random.Generator, count: int) -> Vectors:
    """Return `count` random L2-normalised vectors."""
    vectors = rng.standard_normal((count, DIMS), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def build_rows(
    count: int, keys: int, rng: np.random.Generator, *, neighbours: bool = False
) -> tuple[pa.Table, list[str]]:
    """Return `count` entry rows as the write path hands them to the store, and their texts.

    With `neighbours`, each row's full-text `search_text` also carries the text of the row
    before it in its key, as a conversation turn's does (`memory.store.neighbour_text`).
    """
    vocabulary = [f"w{i}" for i in range(VOCABULARY)]
    ranks = np.minimum(rng.zipf(1.2, size=(count, WORDS_PER_ENTRY)), VOCABULARY) - 1
    texts = [" ".join(vocabulary[r] for r in row) for row in ranks]
    now = datetime.now(UTC)
    columns: dict[str, Any] = {
        "entry_id": [f"e{i:07d}" for i in range(count)],
        "key": [f"key-{i % keys:04d}" for i in range(count)],
        "speaker": ["user"] * count,
        "role": [None] * count,
        "memory_type": [None] * count,
        "kind": ["entry"] * count,
        "chunk_index": [0] * count,
        "chunk_count": [1] * count,
        "text": texts,
        "content": texts,
        "tags": [["bench"]] * count,
        "metadata": ["{}"] * count,
        "attachments": ["[]"] * count,
        "summary_of": [[]] * count,
        "created_at": [now] * count,
        "seq": list(range(count)),
        "token_count": [WORDS_PER_ENTRY] * count,
    }
    fields = [f for f in entries_schema(DIMS) if f.name not in DERIVED_COLUMNS]
    arrays = [pa.array(columns[f.name], f.type) for f in fields]
    flat = pa.array(unit(rng, count).ravel())
    arrays.append(pa.FixedSizeListArray.from_arrays(flat, DIMS))
    schema = pa.schema([*fields, entries_schema(DIMS).field("vector")])
    table = pa.Table.from_arrays(arrays, schema=schema)
    if neighbours:
        before = [None if i < keys else i - keys for i in range(count)]
        carried = [
            f"user: {text}" if b is None else f"user: {text}{CONTEXT_SEPARATOR}{texts[b]}"
            for text, b in zip(texts, before, strict=True)
        ]
        table = table.append_column("search_text", pa.array(carried, pa.string()))
        ids = [None if b is None else f"e{b:07d}" for b in before]
        table = table.append_column(CONTEXT_COLUMN, pa.array(ids, pa.string()))
        # the carried turn's own columns, as the store's writer gives them (store.carried)
        table = table.append_column("carried_speaker", pa.array(["user"] * count, pa.string()))
        table = table.append_column(
            "carried_tags", pa.array([[] for _ in range(count)], pa.list_(pa.string()))
        )
        table = table.append_column(
            "carried_created_at", pa.array([now] * count, pa.timestamp("us", tz="UTC"))
        )
    return table, texts


def percentile(values: Sequence[float], share: float) -> float:
    """Return the `share` percentile (nearest rank) of `values`, in milliseconds."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))
    return 1000 * ordered[index]


def main(argv: list[str] | None = None) -> None:
    """Build the table, time the four query kinds interleaved and print p50/p95 and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument(
        "--neighbours",
        action="store_true",
        help="index each row with the row before it in its key, as conversation turns are",
    )
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)

    with tempfile.TemporaryDirectory(prefix="membank-search-") as tmp:
        uri = str(Path(tmp) / "db")
        started = time.perf_counter()
        rows, texts = build_rows(args.entries, args.keys, rng, neighbours=args.neighbours)
        built = time.perf_counter() - started
        store = LanceStore(uri)
        query_vectors: dict[str, np.ndarray[Any, Any]] = {}

        def provide(mode: Mode) -> Embedder:
            return LookupEmbedder(query_vectors)

        ctx = Context(store=store, account="bench", embedder=provide)
        bank = banks.create(ctx, BankCreate(name="search", type="general", mode="balanced"))
        started = time.perf_counter()
        store.add_rows(bank.id, rows)
        inserted = time.perf_counter() - started
        print(
            f"built {args.entries} rows over {args.keys} keys in {built:.1f} s, "
            f"inserted through LanceStore.add_rows (one batch, indices) in {inserted:.1f} s"
        )

        queries: list[tuple[str, str, np.ndarray[Any, Any]]] = []
        for n in range(args.queries):
            row = int(rng.integers(args.entries))
            key = f"key-{row % args.keys:04d}"
            words = texts[row].split()
            picked = rng.choice(len(words), size=3, replace=False)
            text = " ".join(words[int(i)] for i in picked) + f" q{n}"
            vector = unit(rng, 1)[0]
            query_vectors[text] = vector
            queries.append((key, text, vector))

        raw = lancedb.connect(uri).open_table(entries_table_name(bank.id))
        columns = list(ENTRY_COLUMNS)

        def raw_vector(key: str, vector: np.ndarray[Any, Any]) -> pa.Table:
            query = raw.search(vector, query_type="vector").distance_type("cosine")
            query = query.where(filters.equals("key", key), prefilter=True)
            result: pa.Table = query.select([*columns, "_distance"]).limit(args.k).to_arrow()
            return result

        def raw_hybrid(key: str, text: str, vector: np.ndarray[Any, Any]) -> pa.Table:
            query = raw.search(query_type="hybrid", fts_columns="search_text")
            query = query.vector(vector).text(text).distance_type("cosine")
            query = query.where(filters.equals("key", key), prefilter=True)
            selected = query.select(columns)
            result: pa.Table = selected.limit(args.k).to_arrow()
            return result

        def membank(method: str) -> Callable[[str, str, np.ndarray[Any, Any]], Any]:
            def run(key: str, text: str, vector: np.ndarray[Any, Any]) -> Any:
                query = SearchQuery(text=text, k=args.k, key=key, method=method)  # type: ignore[arg-type]
                return search.search(ctx, bank, query)

            return run

        kinds: dict[str, Callable[[str, str, np.ndarray[Any, Any]], Any]] = {
            "raw vector": lambda key, text, vector: raw_vector(key, vector),
            "membank vector": membank("vector"),
            "raw hybrid": raw_hybrid,
            "membank hybrid": membank("hybrid"),
        }
        for run in kinds.values():  # warm up caches and indices
            for key, text, vector in queries[:10]:
                run(key, text, vector)
        timings: dict[str, list[float]] = {name: [] for name in kinds}
        empty = 0
        for _ in range(args.rounds):
            for key, text, vector in queries:
                for name, run in kinds.items():
                    started = time.perf_counter()
                    result = run(key, text, vector)
                    timings[name].append(time.perf_counter() - started)
                    if name == "membank hybrid" and not result:
                        empty += 1

    print(
        f"{args.queries} queries x {args.rounds} rounds, k={args.k}, key filter "
        f"(~{args.entries // args.keys} entries per key); {empty} empty hybrid results"
    )
    print(f"{'query':<16} {'p50 ms':>8} {'p95 ms':>8}")
    figures = {}
    for name, values in timings.items():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        figures[name] = (p50, p95)
        print(f"{name:<16} {p50:8.2f} {p95:8.2f}")
    for method in ("vector", "hybrid"):
        mine, base = figures[f"membank {method}"], figures[f"raw {method}"]
        print(
            f"ratio membank/raw {method:<6}: p50 {mine[0] / base[0]:.2f}x, "
            f"p95 {mine[1] / base[1]:.2f}x (target p95 <= 1.2x); mean "
            f"{statistics.fmean(timings[f'membank {method}']) * 1000:.2f} ms vs "
            f"{statistics.fmean(timings[f'raw {method}']) * 1000:.2f} ms"
        )
    ratios = {
        f"{method} p{q}": figures[f"membank {method}"][i] / figures[f"raw {method}"][i]
        for method in ("vector", "hybrid")
        for i, q in enumerate((50, 95))
    }
    print(
        json.dumps(
            {
                "ms": {name: list(pair) for name, pair in figures.items()},
                "ratios": ratios,
                "ratio": round(ratios["hybrid p95"], 3),  # the headline: hybrid p95 / native
            }
        )
    )


if __name__ == "__main__":
    main()
