"""Whole-bank search (no key filter) with the vector index: membank vs LanceDB, and recall.

Usage: python bench/vector_index.py [--rows 100000] [--queries 100] [--exact-queries 30]
                                    [--k 10] [--nprobes 20] [--bases 4000]

Vectors (MiniLM-shaped, not perfect clusters): the bundled MiniLM embedder embeds `--bases`
generated sentences; each row's vector is base i + 0.5 x base j (two random bases) plus
Gaussian noise (`--noise`: sigma 0.02 a dimension), L2-normalised; its text is base i's
sentence and a few Zipf words (bench/search.py), so text and vector agree as in real
entries. Queries are other generated sentences (none stored) and their MiniLM embeddings.
The rows go in through `LanceStore.add_rows`; `LanceStore.maintain` then builds the vector
index (timed).

Timed on the same table, interleaved (p50/p95 over `--queries`):
- membank hybrid / vector: `search.search(ctx, bank, SearchQuery(..., min_score=0))`, no key;
- native hybrid / vector over the same index: `table.search(...).nprobes(n)` (hybrid:
  `query_type="hybrid", fts_columns="search_text"`, `.vector(v).text(t)`);
- exact: membank hybrid on a store with `nprobes=0` (brute force, as before the index) and
  LanceDB's `bypass_vector_index()` vector query, over the first `--exact-queries` queries.
recall@10: membank's indexed top 10 entries against the exact ones (vector: brute-force
vector query; hybrid: membank's exact hybrid), over the exact queries.
Maintenance builds a BTree on `entry_id` with the vector index (at commit 40491ae it did
not; that run's `--id-index` flag built one by hand as a probe).
Target (issue 24): membank hybrid p95 <= 1.5x native hybrid over the same index, recall@10
>= 0.95. The last line of stdout is a JSON object; `ratio` is membank hybrid p95 / native
hybrid p95.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lancedb
import numpy as np
import pyarrow as pa

from bench.search import LookupEmbedder, build_rows, percentile
from memory import banks, search
from memory.config import Mode
from memory.context import Context
from memory.models import BankCreate, SearchQuery
from memory.ports import Embedder
from memory.providers.embed import MiniLMEmbedder
from memory.store.lance import LanceStore, entries_table_name
from memory.store.schema import ENTRY_COLUMNS
from memory.store.segments import StoreTuning

WHO = ["my sister", "the plumber", "our landlord", "a neighbour", "the courier", "my boss"]
WHO += ["the vet", "grandma", "the new intern", "our kid's teacher", "the mechanic"]
DID = ["fixed", "asked about", "complained about", "forgot", "ordered", "returned"]
DID += ["painted", "sold", "borrowed", "broke", "recommended", "cancelled"]
WHAT = ["the water tank", "a birthday cake", "the blue bicycle", "two concert tickets"]
WHAT += ["the kitchen tap", "a used laptop", "the garden fence", "the dentist appointment"]
WHAT += ["a sourdough starter", "the car insurance", "the wifi router", "a hiking trip"]
WHEN = ["on Monday", "last week", "before the holidays", "this morning", "in March"]
WHEN += ["after the storm", "during lunch", "at the airport", "yesterday evening"]


def sentences(rng: np.random.Generator, count: int) -> list[str]:
    """Return `count` distinct generated sentences in random order."""
    every = [" ".join(parts) for parts in itertools.product(WHO, DID, WHAT, WHEN)]
    picked = rng.choice(len(every), size=count, replace=False)
    return [every[int(i)] for i in picked]


def row_vectors(
    bases: np.ndarray[Any, Any], i: np.ndarray[Any, Any], rng: np.random.Generator, sigma: float
) -> Any:
    """Return one unit vector per base index in `i`: base i + 0.5 base j (j random) + noise
    (`sigma` a dimension), normalised."""
    count = len(i)
    j = rng.integers(len(bases), size=count)
    noise = rng.standard_normal((count, bases.shape[1]), dtype=np.float32) * sigma
    vectors = bases[i] + 0.5 * bases[j] + noise
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32)


def main(argv: list[str] | None = None) -> None:
    """Build the table and the index, time the query kinds, print figures and recall."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--exact-queries", type=int, default=30)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--nprobes", type=int, default=StoreTuning().nprobes)
    parser.add_argument("--bases", type=int, default=4_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--noise", type=float, default=0.02, help="sigma a dimension")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)

    texts_all = sentences(rng, args.bases + args.queries)
    started = time.perf_counter()
    embedded = MiniLMEmbedder().embed(texts_all)
    print(f"MiniLM embedded {len(texts_all)} sentences in {time.perf_counter() - started:.1f} s")
    bases, query_vecs = embedded[: args.bases], embedded[args.bases :]
    rows, words = build_rows(args.rows, 1_000, rng)
    base_of = rng.integers(args.bases, size=args.rows)
    texts = [f"{texts_all[b]} {w[:20]}" for b, w in zip(base_of, words, strict=True)]
    for name in ("text", "content"):
        position = rows.schema.get_field_index(name)
        rows = rows.set_column(position, name, pa.array(texts, pa.string()))
    vectors = row_vectors(bases, base_of, rng, args.noise)
    column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), vectors.shape[1])
    rows = rows.set_column(rows.schema.get_field_index("vector"), "vector", column)

    with tempfile.TemporaryDirectory(prefix="membank-vindex-") as tmp:
        uri = str(Path(tmp) / "db")
        threshold = min(args.rows, StoreTuning().vector_index_rows)  # small runs index too
        tuning = StoreTuning(nprobes=args.nprobes, vector_index_rows=threshold)
        store = LanceStore(uri, tuning=tuning)
        lookup: dict[str, np.ndarray[Any, Any]] = {}

        def provide(mode: Mode) -> Embedder:
            return LookupEmbedder(lookup)

        ctx = Context(store=store, account="bench", embedder=provide)
        bank = banks.create(ctx, BankCreate(name="vindex", type="general", mode="balanced"))
        store.add_rows(bank.id, rows)
        started = time.perf_counter()
        store.maintain(bank.id)
        build = time.perf_counter() - started
        exact_ctx = Context(
            store=LanceStore(uri, tuning=StoreTuning(nprobes=0)), account="bench", embedder=provide
        )
        print(f"{args.rows} rows; maintain (vector index build) {build:.1f} s")

        queries: list[tuple[str, np.ndarray[Any, Any]]] = []
        for n in range(args.queries):
            text = texts_all[args.bases + n]
            lookup[text] = query_vecs[n]
            queries.append((text, query_vecs[n]))
        raw = lancedb.connect(uri).open_table(entries_table_name(bank.id))
        columns = list(ENTRY_COLUMNS)

        def native_vector(text: str, vector: Any, exact: bool = False) -> list[str]:
            query = raw.search(vector, query_type="vector").distance_type("cosine")
            query = query.bypass_vector_index() if exact else query.nprobes(args.nprobes)
            found = query.select([*columns, "_distance"]).limit(args.k).to_arrow()
            return [str(e) for e in found.column("entry_id").to_pylist()]

        def native_hybrid(text: str, vector: Any) -> list[str]:
            query = raw.search(query_type="hybrid", fts_columns="search_text")
            query = query.vector(vector).text(text).distance_type("cosine").nprobes(args.nprobes)
            found = query.select(columns).limit(args.k).to_arrow()
            return [str(e) for e in found.column("entry_id").to_pylist()]

        def membank(method: str, on: Context) -> Callable[[str, Any], list[str]]:
            def run(text: str, vector: Any) -> list[str]:
                query = SearchQuery(text=text, k=args.k, method=method, min_score=0.0)  # type: ignore[arg-type]
                return [hit.entry.id for hit in search.search(on, bank, query)]

            return run

        kinds: dict[str, Callable[[str, Any], list[str]]] = {
            "native vector": native_vector,
            "membank vector": membank("vector", ctx),
            "native hybrid": native_hybrid,
            "membank hybrid": membank("hybrid", ctx),
        }
        exact_kinds: dict[str, Callable[[str, Any], list[str]]] = {
            "exact vector": lambda text, vector: native_vector(text, vector, exact=True),
            "membank exact hybrid": membank("hybrid", exact_ctx),
        }
        for run in [*kinds.values(), *exact_kinds.values()]:  # warm up
            for text, vector in queries[:3]:
                run(text, vector)
        timings: dict[str, list[float]] = {name: [] for name in [*kinds, *exact_kinds]}
        found: dict[str, list[list[str]]] = {name: [] for name in timings}
        for n, (text, vector) in enumerate(queries):
            runs = dict(kinds)
            if n < args.exact_queries:
                runs |= exact_kinds
            for name, run in runs.items():
                started = time.perf_counter()
                ids = run(text, vector)
                timings[name].append(time.perf_counter() - started)
                found[name].append(ids)

    def recall(mine: str, truth: str) -> float:
        pairs = zip(found[mine], found[truth], strict=False)
        shares = [len(set(a) & set(b)) / max(len(b), 1) for a, b in pairs]
        return round(sum(shares) / len(shares), 4)

    recalls = {
        "membank vector vs exact vector": recall("membank vector", "exact vector"),
        "native vector vs exact vector": recall("native vector", "exact vector"),
        "membank hybrid vs membank exact hybrid": recall("membank hybrid", "membank exact hybrid"),
    }
    figures = {name: [percentile(v, 0.5), percentile(v, 0.95)] for name, v in timings.items()}
    print(f"k={args.k}, nprobes {args.nprobes}, no key filter")
    print(f"{'query':<22} {'n':>4} {'p50 ms':>9} {'p95 ms':>9}")
    for name, (p50, p95) in figures.items():
        print(f"{name:<22} {len(timings[name]):>4} {p50:9.2f} {p95:9.2f}")
    for name, value in recalls.items():
        print(f"recall@{args.k} {name}: {value:.3f}")
    ratio = figures["membank hybrid"][1] / figures["native hybrid"][1]
    speedup = figures["membank exact hybrid"][1] / figures["membank hybrid"][1]
    print(f"membank hybrid p95 / native hybrid p95: {ratio:.2f}x (target <= 1.5x)")
    print(f"membank exact hybrid p95 / indexed: {speedup:.1f}x")
    print(
        json.dumps(
            {
                "rows": args.rows,
                "nprobes": args.nprobes,
                "build_s": round(build, 2),
                "noise": args.noise,
                "ms": figures,
                "recall": recalls,
                "ratio": round(ratio, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
