"""Write throughput: membank's write path vs raw LanceDB `table.add`, and end to end with MiniLM.

Usage: python bench/write.py [--entries 20000] [--batch 1000] [--repeats 3] [--profile]
                             [--e2e-entries 500] [--skip-e2e]

Part 1, precomputed vectors. N synthetic conversation turns (20-60 words, one chunk each)
are written in batches with `memory.entries.writer` through a `Context` whose embedder serves
precomputed random unit vectors (`PrecomputedEmbedder`: it returns the next rows of a matrix
built before the clock starts, a slice per call, so no embedding cost is measured). The
baseline adds the Arrow rows membank stores for the same items (captured by an untimed
membank pass: same schema, same columns, same batches; only the generated ids differ) with
raw `lancedb` `table.add` to a fresh table with the same key and full-text indices, plus
`table.optimize()` as often as membank's store folded rows into its indices. Each run
interleaves the two batch by batch (alternating which goes first) on fresh tables;
`--repeats` runs, medians reported. membank's time is split into entries.py (validation,
tokenizing and chunking, records, Arrow rows) and `LanceStore.add_rows`, and the store's
index maintenance (folding new rows into the indices) is shown on its own: raw `table.add`
leaves rows unindexed, so a search pays for them later instead.

Part 2, end to end. `--e2e-entries` texts are written through membank with the default
offline embedder (MiniLM int8, `embedder_for("membank/minilm-l6-int8", 384)`) vs that
embedder alone on the same texts in the same batches, interleaved batch by batch.

Every figure and its baseline come from the same run; the ratios are membank / baseline.
The last line of stdout is a JSON object, `ratio` being part 1's membank / raw.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import BTree

from memory import banks, entries
from memory.config import Mode
from memory.context import Context
from memory.models import Bank, BankCreate, EntryIn
from memory.ports import Embedder, Vectors
from memory.providers.embed import MINILM_DIMS, MINILM_NAME, embedder_for
from memory.providers.tokens import count_tokens
from memory.store import indices
from memory.store.lance import LanceStore, with_search_text
from memory.store.schema import entries_schema

DIMS = MINILM_DIMS
SENTENCES = (
    "we talked about the trip to lisbon next month and the budget for hotels flights "
    "dinner museum tickets my sister wants to join she asked whether the kids can come "
    "the meeting moved to thursday because the client needs more time to review the "
    "contract please remember that I prefer window seats and vegetarian meals the "
    "support ticket about the broken invoice export is still open since last week"
)
WORDS = SENTENCES.split()


class PrecomputedEmbedder:
    """Serves rows of a precomputed matrix in call order: embedding costs a slice."""

    name = "bench/precomputed"

    def __init__(self, vectors: Vectors) -> None:
        self.dims = int(vectors.shape[1])
        self._vectors = vectors
        self._next = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return the next len(texts) precomputed vectors."""
        start, self._next = self._next, self._next + len(texts)
        if self._next > len(self._vectors):
            raise RuntimeError("PrecomputedEmbedder ran out of vectors")
        return self._vectors[start : self._next]


class RecordingStore(LanceStore):
    """A LanceStore that times `add_rows` and its index maintenance (and, when told to,
    keeps what it wrote: only in the untimed capture pass, so timed writes do no extra work)."""

    def __init__(self, uri: str, *, record: bool = False) -> None:
        super().__init__(uri)
        self.record = record
        self.batches: list[pa.Table] = []
        self.add_seconds = 0.0
        self.maintain_seconds = 0.0
        self.maintained = 0

    def _add_rows(self, bank_id: str, rows: pa.Table, *, stamped: bool = False) -> list[Any]:
        """Store the rows as LanceStore does (`add_rows` and a write's `append` both come
        here), timing it and recording the stored rows."""
        dims = int(rows.schema.field("vector").type.list_size)
        started = time.perf_counter()
        added = super()._add_rows(bank_id, rows, stamped=stamped)
        self.add_seconds += time.perf_counter() - started
        if self.record:
            self.batches.append(with_search_text(rows, entries_schema(dims)))
        return added

    def _maintain(self, table: Any, *, merge: bool = False) -> None:
        started = time.perf_counter()
        super()._maintain(table, merge=merge)
        self.maintain_seconds += time.perf_counter() - started
        self.maintained += 1


def make_items(count: int, seed: int = 7) -> list[EntryIn]:
    """Return `count` synthetic conversation turns over 100 keys (one chunk each)."""
    rng = random.Random(seed)
    items = []
    for i in range(count):
        words = rng.choices(WORDS, k=rng.randint(20, 60))
        items.append(
            EntryIn(
                key=f"conversation-{i % 100}",
                content=" ".join(words).capitalize() + ".",
                speaker="user" if i % 2 == 0 else "assistant",
                role="user" if i % 2 == 0 else "assistant",
                tags=["bench"],
                metadata={"n": i},
            )
        )
    return items


def unit_vectors(count: int, seed: int = 11) -> Vectors:
    """Return `count` random L2-normalised float32 vectors."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, DIMS), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def new_bank(ctx: Context, name: str) -> Bank:
    """Return a fresh conversation bank (balanced mode, no compaction trigger)."""
    return banks.create(ctx, BankCreate(name=name, type="conversation", mode="balanced"))


def chunked(items: Sequence[EntryIn], size: int) -> list[Sequence[EntryIn]]:
    """Return `items` in consecutive batches of `size`."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def serving(embedder: Embedder) -> Callable[[Mode], Embedder]:
    """Return a Context embedder factory that always hands out `embedder`."""

    def provide(mode: Mode) -> Embedder:
        return embedder

    return provide


def capture(root: Path, items: Sequence[EntryIn], batch: int, vectors: Vectors) -> list[pa.Table]:
    """Return the Arrow batches membank stores for `items` (an untimed membank pass)."""
    store = RecordingStore(str(root), record=True)
    ctx = Context(store=store, account="bench", embedder=serving(PrecomputedEmbedder(vectors)))
    bank = new_bank(ctx, "capture")
    for part in chunked(items, batch):
        entries.write(ctx, bank, part)
    return store.batches


def raw_table(root: Path) -> Any:
    """Return a fresh raw lancedb table with the entries schema and the same indices."""
    table = lancedb.connect(str(root)).create_table("raw", schema=entries_schema(DIMS))
    table.create_index("key", config=BTree(), name=indices.KEY_INDEX)
    table.create_index(indices.FTS_COLUMN, config=indices.FTS_CONFIG, name=indices.FTS_INDEX)
    return table


@dataclass
class Interleaved:
    """Seconds of one interleaved run: membank (and its store part) vs raw."""

    membank: float = 0.0
    store: float = 0.0
    maintenance: float = 0.0
    raw: float = 0.0


def interleaved_run(
    root: Path,
    items: Sequence[EntryIn],
    batch: int,
    vectors: Vectors,
    captured: Sequence[pa.Table],
) -> Interleaved:
    """Write each batch through membank and its captured rows with raw `table.add`, in turn."""
    store = RecordingStore(str(root / "membank"))
    ctx = Context(store=store, account="bench", embedder=serving(PrecomputedEmbedder(vectors)))
    bank = new_bank(ctx, "write")
    raw = raw_table(root / "raw")
    result = Interleaved()
    optimized = 0  # the raw table is optimized as often as membank's store maintained
    for number, (part, rows) in enumerate(zip(chunked(items, batch), captured, strict=True)):
        for side in ("membank", "raw") if number % 2 == 0 else ("raw", "membank"):
            started = time.perf_counter()
            if side == "membank":
                entries.write(ctx, bank, part)
                result.membank += time.perf_counter() - started
            else:
                raw.add(rows)
                if store.maintained > optimized:  # index at membank's cadence
                    raw.optimize()
                    optimized = store.maintained
                result.raw += time.perf_counter() - started
    result.store, result.maintenance = store.add_seconds, store.maintain_seconds
    return result


def part_precomputed(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    """Run part 1 and print its figures; returns the medians and the ratio."""
    items = make_items(args.entries)
    vectors = unit_vectors(args.entries)
    count_tokens("warm up the tokenizer")  # loading it once per process is not a write cost
    captured = capture(tmp / "capture", items, args.batch, vectors)
    runs: list[Interleaved] = []
    for run in range(args.repeats):
        runs.append(interleaved_run(tmp / f"run{run}", items, args.batch, vectors, captured))
        last = runs[-1]
        print(
            f"  run {run + 1}: membank {last.membank:.3f} s (store.add_rows {last.store:.3f} s,"
            f" maintenance {last.maintenance:.3f} s), raw table.add {last.raw:.3f} s"
        )
    rows = sum(t.num_rows for t in captured)
    m = statistics.median(r.membank for r in runs)
    s = statistics.median(r.store for r in runs)
    i = statistics.median(r.maintenance for r in runs)
    r = statistics.median(x.raw for x in runs)
    n = args.entries
    print(
        f"precomputed vectors: {n} entries ({rows} rows) in batches of {args.batch}, "
        f"median of {args.repeats} interleaved runs"
    )
    print(f"  membank entries.write      {m:7.3f} s  {n / m:8.0f} entries/s")
    print(f"    entries.py (validate, tokenize+chunk, records, Arrow rows) {m - s:7.3f} s")
    print(f"    store.add_rows           {s:7.3f} s  (index maintenance {i:.3f} s of it)")
    print(f"  raw lancedb table.add      {r:7.3f} s  {n / r:8.0f} entries/s")
    print(f"  ratio membank/raw          {m / r:7.2f}x  (target <= 1.3x)")
    print(f"  ratio store.add_rows/raw   {s / r:7.2f}x  (maintenance excluded: {(s - i) / r:.2f}x)")
    if args.profile:
        profile_write(tmp / "profile", items, args.batch, vectors)
    return {"membank_s": m, "store_s": s, "maintenance_s": i, "raw_s": r, "ratio": m / r}


def profile_write(root: Path, items: Sequence[EntryIn], batch: int, vectors: Vectors) -> None:
    """Print where one membank pass spends its own time (cProfile; it inflates Python code)."""
    store = RecordingStore(str(root))
    ctx = Context(store=store, account="bench", embedder=serving(PrecomputedEmbedder(vectors)))
    bank = new_bank(ctx, "profile")
    profiler = cProfile.Profile()
    profiler.enable()
    for part in chunked(items, batch):
        entries.write(ctx, bank, part)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    print("profile of one membank pass, by own time:")
    print("\n".join(lines[2:]))


def part_end_to_end(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    """Run part 2 and print its figures; returns the totals and the ratio."""
    items = make_items(args.e2e_entries, seed=13)
    minilm = embedder_for(MINILM_NAME, DIMS)
    minilm.embed([item.content for item in items[:8]])  # warm up the session
    ctx = Context(store=LanceStore(str(tmp / "e2e")), account="bench", embedder=serving(minilm))
    bank = new_bank(ctx, "e2e")
    membank_s = embed_s = 0.0
    for number, part in enumerate(chunked(items, args.e2e_batch)):
        for side in ("membank", "embed") if number % 2 == 0 else ("embed", "membank"):
            started = time.perf_counter()
            if side == "membank":
                entries.write(ctx, bank, part)
                membank_s += time.perf_counter() - started
            else:
                minilm.embed([item.content for item in part])
                embed_s += time.perf_counter() - started
    n = len(items)
    tokens = sum(count_tokens(item.content) for item in items)
    print(
        f"end to end with {MINILM_NAME}: {n} entries ({tokens} tokens) in batches of "
        f"{args.e2e_batch}, interleaved"
    )
    print(f"  membank entries.write      {membank_s:7.2f} s  {n / membank_s:7.1f} entries/s")
    print(f"  embedder alone             {embed_s:7.2f} s  {n / embed_s:7.1f} entries/s")
    print(f"  ratio membank/embedder     {membank_s / embed_s:7.2f}x")
    return {"membank_s": membank_s, "embed_s": embed_s, "ratio": membank_s / embed_s}


def main(argv: list[str] | None = None) -> None:
    """Parse options, run both parts and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--entries", type=int, default=20_000, help="entries, part 1")
    parser.add_argument("--batch", type=int, default=1_000, help="entries per write, part 1")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs, part 1")
    parser.add_argument("--profile", action="store_true", help="profile a membank pass")
    parser.add_argument("--e2e-entries", type=int, default=500, help="entries, part 2")
    parser.add_argument("--e2e-batch", type=int, default=100, help="entries per write, part 2")
    parser.add_argument("--skip-e2e", action="store_true", help="only part 1")
    args = parser.parse_args(argv)
    print(f"bench/write.py on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="membank-write-") as name:
        tmp = Path(name)
        figures: dict[str, object] = {"precomputed": part_precomputed(args, tmp)}
        if not args.skip_e2e:
            figures["end_to_end"] = part_end_to_end(args, tmp)
    # the headline: membank's write path over raw add + optimize (part 1)
    figures["ratio"] = round(figures["precomputed"]["ratio"], 3)  # type: ignore[index]
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
