"""Do the token word caches pay end to end? membank's writes with them vs without.

Usage: python bench/token_cache.py [--entries 20000] [--batch 1000] [--repeats 3]

`memory.providers.tokens.TokenCounter.word_count` counts text whose only whitespace is single
spaces from remembered per-word counts; without it every chunk is encoded by tiktoken. Three
measurements, each side by side in one run (the variants interleaved, alternating which goes first):

1. count: `count_tokens` over every turn of the LoCoMo sample (real conversation text, its
   real vocabulary), cold caches each pass, with the fast path vs without.
2. chunk: `chunk_many` over those synthetic turns (the CPU part of a write the caches touch).
3. write: bench/write.py's synthetic turns written through `memory.entries.write` with
   precomputed vectors (no embedding cost) on fresh banks, with the fast path vs without.

The last line is one JSON object; `ratio` is write time without the caches over with them
(above 1: the caches pay).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from write import PrecomputedEmbedder, chunked, make_items, new_bank, serving, unit_vectors

from memory import entries
from memory.context import Context
from memory.entries.chunking import chunk_many
from memory.providers import tokens
from memory.settings import Settings
from memory.store.lance import LanceStore

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo"


@contextmanager
def caches(on: bool) -> Iterator[None]:
    """Run with the word caches (emptied first) or with every count encoded."""
    real = tokens.COUNTER
    tokens.COUNTER = tokens.TokenCounter()
    if not on:
        tokens.COUNTER.word_count = lambda text: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        tokens.COUNTER = real


def locomo_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted(LOCOMO.glob("*.json")):
        data = json.loads(path.read_text("utf-8"))
        conversation = data.get("conversation", data)
        for name, value in conversation.items():
            if name.startswith("session_") and isinstance(value, list):
                texts += [str(turn.get("text", "")) for turn in value if turn.get("text")]
    return texts


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    texts = locomo_texts()
    count: dict[bool, list[float]] = {True: [], False: []}
    for run in range(args.repeats):
        for on in (True, False) if run % 2 == 0 else (False, True):
            with caches(on):
                count[on].append(timed(lambda: [tokens.count_tokens(t) for t in texts]))

    items = make_items(args.entries)
    contents = [item.content for item in items]
    chunk: dict[bool, list[float]] = {True: [], False: []}
    for run in range(args.repeats):
        for on in (True, False) if run % 2 == 0 else (False, True):
            with caches(on):
                chunk[on].append(timed(lambda: chunk_many(contents, size=256, overlap=32)))
    vectors = unit_vectors(args.entries)
    write: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.repeats):
            for on in (True, False) if run % 2 == 0 else (False, True):
                root = Path(tmp) / f"run{run}-{on}"
                store = LanceStore(str(root))
                embedder = PrecomputedEmbedder(vectors)
                ctx = Context(store=store, embedder=serving(embedder), settings=Settings())
                bank = new_bank(ctx, "bench")
                with caches(on):
                    started = time.perf_counter()
                    for batch in chunked(items, args.batch):
                        entries.write(ctx, bank, batch)
                    write[on].append(time.perf_counter() - started)
    result = {
        "locomo_turns": len(texts),
        "count_with_s": round(statistics.median(count[True]), 3),
        "count_without_s": round(statistics.median(count[False]), 3),
        "entries": args.entries,
        "chunk_with_s": round(statistics.median(chunk[True]), 3),
        "chunk_without_s": round(statistics.median(chunk[False]), 3),
        "write_with_s": round(statistics.median(write[True]), 3),
        "write_without_s": round(statistics.median(write[False]), 3),
    }
    result["count_ratio"] = round(result["count_without_s"] / result["count_with_s"], 2)
    result["chunk_ratio"] = round(result["chunk_without_s"] / result["chunk_with_s"], 2)
    result["ratio"] = round(result["write_without_s"] / result["write_with_s"], 3)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
