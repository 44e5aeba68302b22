"""Bank statistics over 1,000,000 entries (100,000 keys) vs plain polars on the same data.

Usage: python bench/stats.py [--entries 1000000] [--keys 100000] [--repeat 7] [--dir DIR]

`memory.stats.compute` (projected Lance scan + polars aggregates) is timed against a plain
polars computation of the same figures over the same rows already in memory as Arrow (the
baseline does no I/O at all). Best of `--repeat` alternating runs each. Targets: at most 1.5x the
baseline and under 2 s. The last line of stdout is a JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synthetic_bank import NOW, build, context

from memory import stats

COLUMNS = ["key", "speaker", "kind", "tags", "token_count", "created_at"]


def plain_polars(frame: pl.DataFrame, since: Any) -> dict[str, Any]:
    """Return the same figures as memory.stats, computed straightforwardly with polars."""
    window = frame.filter(pl.col("created_at") >= since)
    age = (pl.lit(NOW) - pl.col("created_at")).dt.total_seconds() / 86_400
    per_key = window.group_by("key").len()
    people = window.filter(pl.col("kind") != "summary").drop_nulls("speaker")
    speakers = people.group_by("speaker").len().sort(["len", "speaker"], descending=[True, False])
    tags = window.select(pl.col("tags").explode()).drop_nulls().group_by("tags").len()
    held = (pl.lit(NOW) - pl.max_horizontal("created_at", pl.lit(since))).dt.total_seconds()

    def dist(expr: pl.Expr) -> list[Any]:
        return [
            expr.mean().alias("avg"),
            expr.quantile(0.95, "linear").alias("p95"),
            expr.min().alias("min"),
            expr.max().alias("max"),
        ]

    first_last = window.select(
        pl.len(), pl.col("created_at").min().alias("first"), pl.col("created_at").max()
    ).row(0)
    return {
        "cards": (first_last[0], per_key.height, speakers.height, *first_last[1:]),
        "tokens": window.select(dist(pl.col("token_count"))).row(0),
        "age": window.select(dist(age)).row(0),
        "per_key": per_key.select(dist(pl.col("len"))).row(0),
        "top_keys": per_key.sort(["len", "key"], descending=[True, False]).head(10).rows(),
        "top_speakers": speakers.head(10).rows(),
        "top_tags": tags.sort(["len", "tags"], descending=[True, False]).head(10).rows(),
        "entry_days": frame.select(held.sum()).item() / 86_400,
    }


def interleaved(fns: list[Any], repeat: int) -> list[tuple[float, Any]]:
    """Return (best wall time, last result) of each function, run alternately `repeat` times.

    Alternating keeps a noisy machine's slow spells from landing on one side only.
    """
    best = [float("inf")] * len(fns)
    results: list[Any] = [None] * len(fns)
    for _ in range(repeat):
        for index, fn in enumerate(fns):
            started = time.perf_counter()
            results[index] = fn()
            best[index] = min(best[index], time.perf_counter() - started)
    return list(zip(best, results, strict=True))


def main() -> None:
    """Build the bank, time both computations, check they agree, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dir", help="where to build the bank (default: a temporary folder)")
    args = parser.parse_args()
    folder = Path(args.dir or tempfile.mkdtemp(prefix="membank-bench-stats-"))
    try:
        ctx = context(str(folder / "db"))
        bank, build_s = build(ctx, entries=args.entries, keys=args.keys)
        print(f"built {args.entries:,} entries over {args.keys:,} keys in {build_s:.1f} s")
        since = NOW - timedelta(days=30)
        table = ctx.store.scan(bank.id, columns=COLUMNS)
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        (base_s, base), (ours_s, ours) = interleaved(
            [lambda: plain_polars(frame, since), lambda: stats.compute(ctx, bank)], args.repeat
        )
        assert ours.total_entries == base["cards"][0] == args.entries
        assert ours.unique_keys == base["cards"][1]
        assert abs((ours.token_count.p95 or 0) - base["tokens"][1]) < 1e-9
        assert [(c.name, c.entries) for c in ours.top_keys] == base["top_keys"]
        assert abs(ours.entry_days - base["entry_days"]) < 1e-6 * base["entry_days"]
        ratio = ours_s / base_s
        print(f"plain polars on in-memory Arrow (baseline): {base_s * 1000:.0f} ms")
        print(f"memory.stats.compute (scan + aggregate):    {ours_s * 1000:.0f} ms")
        print(f"ratio {ratio:.2f}x (target <= 1.5x), under 2 s: {ours_s < 2}")
        figures = {
            "entries": args.entries,
            "keys": args.keys,
            "baseline_ms": round(base_s * 1000, 1),
            "stats_ms": round(ours_s * 1000, 1),
            "ratio": round(ratio, 2),
            "target_met": ratio <= 1.5 and ours_s < 2,
        }
        print(json.dumps(figures))
    finally:
        if not args.dir:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
