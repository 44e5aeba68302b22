"""A 100-entry conversation write on a small and on a large bank: does its cost grow?

Usage: python bench/write_growth.py [--small 10000] [--large 300000] [--writes 5]
       python bench/write_growth.py --sizes 10000,100000 [--writes 5]

Builds each bank as `bench/retention.py --neighbours` does (turns appended in time order over
100,000 keys, each carrying the turn before it, maintained), then times `--writes` writes of
100 turns at "now" to 100 keys through `memory.entries.write` (hashing embedder: no model
cost), medians; the first write (whose keys' turns the store has not remembered yet, so it
scans them) is not counted but printed. Target (issue 24): the large bank's median within 2x
of the small one's.
The last line of stdout is a JSON object (`ratio`: large median / small median). With
`--sizes` (used by `bench/growth.py`) each listed size is timed instead, and the JSON object
holds `sizes`, `median_s` and `first_s`, one per size.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retention import NOW, build, context

from memory import entries
from memory.models import EntryIn


def median_write(turns: int, writes: int) -> tuple[float, float]:
    """Return the median seconds of a 100-entry write on a bank of `turns` turns, and the
    seconds of the first write (its keys' turns not yet remembered by the store: a scan).
    The bank's folder is removed afterwards."""
    folder = tempfile.mkdtemp(prefix="membank-write-growth-")
    try:
        ctx = context(folder + "/a")
        bank = build(ctx, turns, 3650, neighbours=True)
        keys = [f"conversation-{k}" for k in range(0, 100_000, 1000)]
        times = []
        for n in range(writes + 1):  # the first write warms the caches: not counted
            at = NOW + timedelta(seconds=1000 * n)
            items = [
                EntryIn(
                    key=key,
                    speaker="ana",
                    content=f"write {n} turn {i} about an order",
                    created_at=at + timedelta(seconds=i),
                )
                for i, key in enumerate(keys)
            ]
            started = time.perf_counter()
            entries.write(ctx, bank, items)
            times.append(time.perf_counter() - started)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return statistics.median(times[1:]), times[0]


def main() -> None:
    """Time both banks and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=300_000)
    parser.add_argument("--writes", type=int, default=5)
    parser.add_argument("--sizes", help="comma-separated bank sizes, instead of small/large")
    args = parser.parse_args()
    if args.sizes:
        sizes = [int(size) for size in args.sizes.split(",")]
        timed = [median_write(size, args.writes) for size in sizes]
        for size, (median, first) in zip(sizes, timed, strict=True):
            print(f"100-entry write on {size:,} turns: {median:.3f} s (first {first:.3f} s)")
        medians = [round(median, 5) for median, _ in timed]
        print(
            json.dumps(
                {"sizes": sizes, "median_s": medians, "first_s": [round(f, 5) for _, f in timed]}
            )
        )
        return
    small, small_first = median_write(args.small, args.writes)
    large, large_first = median_write(args.large, args.writes)
    print(
        f"100-entry write: {small:.3f} s on {args.small:,} turns, {large:.3f} s on "
        f"{args.large:,}: {large / small:.2f}x (target <= 2x)"
    )
    print(
        f"first write (uncounted: its keys' turns are scanned): {small_first:.3f} s vs "
        f"{large_first:.3f} s: {large_first / small_first:.2f}x"
    )
    figures = {
        "small_s": round(small, 3),
        "large_s": round(large, 3),
        "small_first_s": round(small_first, 3),
        "large_first_s": round(large_first, 3),
        "ratio": large / small,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
