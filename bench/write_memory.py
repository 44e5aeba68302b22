"""Peak memory of one big write: a 256 kB and a 1 MB write vs loading the embedder alone.

Usage: python bench/write_memory.py [--mode accurate] [--sizes 256000 1000000]

Each case runs in its own process (peak RSS, `resource.getrusage(...).ru_maxrss`, is a
high-water mark: it never goes down, so cases must not share a process):
- baseline: import lancedb and the store, load the default offline embedder (MiniLM int8)
  and embed one batch (64 chunk texts of the same document, cut by the same mode): the
  irreducible part of any write.
- write N bytes: open a context on a fresh folder, create a general bank in `--mode`, and
  write N bytes of prose in one `entries.write` call (entries hold up to 256 kB each, so a
  1 MB write is four entries of 250 kB in one call): chunking, token counts, embedding of
  every chunk, one commit and its index upkeep.
The text is synthetic prose (words and numbers, single spaces), the same in every process.
Target: every write's peak under 1 GB, whatever its size. The JSON line is the last line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = [
    "the",
    "order",
    "shipped",
    "on",
    "monday",
    "and",
    "cost",
    "forty",
    "dollars",
    "while",
    "the",
    "garden",
    "roses",
    "bloom",
    "in",
    "june",
    "alice",
    "told",
    "bob",
    "about",
    "the",
    "river",
    "market",
    "where",
    "tulips",
    "sell",
    "for",
    "two",
    "euros",
    "each",
    "spring",
]
TARGET_MB = 1024


def prose(size: int, seed: int = 7) -> str:
    """Return `size` characters of ASCII prose: words and numbers, single spaces."""
    rng = random.Random(seed)
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS) if rng.random() < 0.8 else str(rng.randint(0, 99_999))
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size].rstrip()


def peak_mb() -> float:
    """Return this process's peak resident memory in MB (ru_maxrss is in kB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_baseline(mode_name: str) -> dict[str, float]:
    """Load what every write loads, embed one batch; return the peak and the time."""
    import lancedb  # noqa: F401  (the store's import, as a write pays it)

    from memory.config import get_mode
    from memory.entries.chunking import chunk_text
    from memory.providers.embed import embedder_for

    mode = get_mode(mode_name)
    texts = chunk_text(prose(64 * 1024), size=mode.chunk_size, overlap=mode.chunk_overlap).texts
    started = time.perf_counter()
    embedder_for(mode.embedder, mode.dims).embed(texts[:64])
    return {"peak_mb": peak_mb(), "seconds": time.perf_counter() - started}


def child_write(mode_name: str, size: int) -> dict[str, float]:
    """Write `size` bytes in one call on a fresh folder; return the peak, time and chunks."""
    from memory import banks, entries
    from memory.models import BankCreate, EntryIn
    from memory.wiring import open_context

    per_entry = 250_000 if size > 256_000 else size
    count = -(-size // per_entry)
    items = [
        EntryIn(key="doc", content=prose(min(per_entry, size - i * per_entry), seed=i))
        for i in range(count)
    ]
    with tempfile.TemporaryDirectory() as folder:
        ctx = open_context(folder)
        bank = banks.create(ctx, BankCreate(name="big", type="general", mode=mode_name))
        started = time.perf_counter()
        entries.write(ctx, bank, items)
        seconds = time.perf_counter() - started
        chunks = ctx.store.count(bank.id)
    return {"peak_mb": peak_mb(), "seconds": seconds, "entries": count, "chunks": chunks}


def run_child(*args: str) -> dict[str, float]:
    """Run this script as a child with `args`; return the JSON figures it printed."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=True,
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    """Run the baseline and each write in its own process; print a table and a JSON line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mode", default="accurate", help="bank mode (configs/modes.yaml)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[256_000, 1_000_000])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "baseline":
            print(json.dumps(child_baseline(args.mode)))
        else:
            print(json.dumps(child_write(args.mode, int(rest[0]))))
        return
    base = run_child("baseline", "--mode", args.mode)
    results = {"mode": args.mode, "baseline": base, "writes": {}}
    print(f"mode {args.mode}; peak RSS per process (target: every write under {TARGET_MB} MB)")
    print(f"{'case':<24}{'peak MB':>9}{'over baseline':>15}{'seconds':>9}{'chunks':>8}")
    print(f"{'baseline (embedder)':<24}{base['peak_mb']:>9.0f}{'':>15}{base['seconds']:>9.1f}")
    for size in args.sizes:
        figures = run_child("write", str(size), "--mode", args.mode)
        results["writes"][str(size)] = figures
        over = figures["peak_mb"] - base["peak_mb"]
        print(
            f"{f'write {size:,} B':<24}{figures['peak_mb']:>9.0f}{over:>+15.0f}"
            f"{figures['seconds']:>9.1f}{int(figures['chunks']):>8}"
        )
    worst = max(f["peak_mb"] for f in results["writes"].values())
    results["under_target"] = worst < TARGET_MB
    print(json.dumps(results))


if __name__ == "__main__":
    main()
