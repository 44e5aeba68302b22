"""How the cost of a write, a search, stats and a retention grows with the bank's rows.

Usage: python bench/growth.py [--sizes 10000,100000,1000000 | --quick]
                              [--ops write,search,stats,retention] [--timeout 1500]

For each size (`--quick`: 10k and 100k), smallest first, runs each operation's own bench
alone in a subprocess (each builds its own bank, in a temporary folder removed after it) and
reads the last stdout line (a JSON object):
- write: `bench/write_growth.py --sizes N --writes 21`: median store time of a 100-entry
  conversation write (hashing embedder) on a bank of N turns over 100,000 keys;
- search: `bench/search.py --entries N --keys N/100` (~100 entries a key): p50/p95 of
  membank's key-filtered hybrid search and of LanceDB's native hybrid query on the same
  table, and membank / native p95;
- stats: `bench/stats.py --entries N --keys N/10 --repeat 5` (its default 10 entries a key):
  best time of `memory.stats.compute`, and plain polars on the rows already in memory;
- retention: `bench/retention.py --entries N`: a third of the entries expired, membank's
  retention and the same final deletion by hand, and a one-entry forget afterwards.
A run that fails (e.g. killed out of memory) or takes over `--timeout` seconds is recorded
as such and the others go on. Prints one table: each figure at each size, its ratio to the
smallest size's, and the log-log slope (least squares of log cost on log rows: 0 flat,
1 linear). The last line of stdout is a JSON object: `sizes`; `figures`, each with `unit`,
`values` (null where not measured), `ratios` (to the smallest size) and `slope`; `runs`,
each bench run's operation, size, seconds and status.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
OPS = ("write", "search", "stats", "retention")


def command(op: str, rows: int) -> list[str]:
    """Return the bench command measuring `op` on a bank of `rows` rows."""
    args = {
        "write": ["write_growth.py", "--sizes", str(rows), "--writes", "21"],
        "search": ["search.py", "--entries", str(rows), "--keys", str(max(1, rows // 100))],
        "stats": ["stats.py", "--entries", str(rows), "--keys", str(max(1, rows // 10))],
        "retention": ["retention.py", "--entries", str(rows)],
    }[op]
    extra = ["--repeat", "5"] if op == "stats" else []
    return [sys.executable, str(BENCH / args[0]), *args[1:], *extra]


@dataclass(frozen=True)
class Figure:
    name: str
    op: str
    unit: str
    read: Callable[[dict[str, Any]], float]


FIGURES = [
    Figure("write: 100-entry write, median", "write", "ms", lambda j: 1000 * j["median_s"][0]),
    Figure("search: membank hybrid p50", "search", "ms", lambda j: j["ms"]["membank hybrid"][0]),
    Figure("search: membank hybrid p95", "search", "ms", lambda j: j["ms"]["membank hybrid"][1]),
    Figure("search: native hybrid p50", "search", "ms", lambda j: j["ms"]["raw hybrid"][0]),
    Figure("search: native hybrid p95", "search", "ms", lambda j: j["ms"]["raw hybrid"][1]),
    Figure("search: membank / native p95", "search", "x", lambda j: j["ratio"]),
    Figure("stats: memory.stats.compute", "stats", "ms", lambda j: j["stats_ms"]),
    Figure("stats: plain polars, in memory", "stats", "ms", lambda j: j["baseline_ms"]),
    Figure("retention: membank", "retention", "s", lambda j: j["membank_seconds"]),
    Figure("retention: by hand", "retention", "s", lambda j: j["by_hand_seconds"]),
    Figure("retention: one-entry forget", "retention", "s", lambda j: j["forget_seconds"]),
]


def run(op: str, rows: int, timeout: float) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Run one bench; return its last JSON line (None when it failed) and the run's record."""
    folder = tempfile.mkdtemp(prefix=f"membank-growth-{op}-")
    env = {**os.environ, "TMPDIR": folder}  # every temporary bank goes here, removed below
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command(op, rows), capture_output=True, text=True, timeout=timeout, env=env
        )
        lines = done.stdout.strip().splitlines()
        if done.returncode == 0 and lines:
            status, figures = "ok", json.loads(lines[-1])
        else:
            killed = " (killed: out of memory?)" if done.returncode == -9 else ""
            last = (done.stderr.strip().splitlines() or [""])[-1][:200]
            status, figures = f"failed rc={done.returncode}{killed}: {last}", None
        for line in lines[:-1]:
            print(f"  | {line}")
    except subprocess.TimeoutExpired:
        status, figures = f"over the {timeout:.0f} s timeout", None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    seconds = time.perf_counter() - started
    print(f"{op} at {rows:,} rows: {status} in {seconds:.0f} s", flush=True)
    return figures, {"op": op, "rows": rows, "seconds": round(seconds, 1), "status": status}


def slope(sizes: list[int], values: list[float | None]) -> float | None:
    """Return the least-squares slope of log value on log size (None under two points)."""
    points = [(math.log(s), math.log(v)) for s, v in zip(sizes, values, strict=True) if v]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def label(rows: int) -> str:
    """Return 10k, 1M, ... for a row count."""
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if rows >= size and rows % size == 0:
            return f"{rows // size}{suffix}"
    return str(rows)


def cell(value: float | None, unit: str) -> str:
    """Return a table cell for `value` in `unit`."""
    if value is None:
        return "-"
    return {"ms": f"{value:.1f} ms", "s": f"{value:.3f} s", "x": f"{value:.2f}x"}[unit]


def main() -> None:
    """Run the benches size by size, then print the table and the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated rows")
    parser.add_argument("--quick", action="store_true", help="sizes 10000,100000")
    parser.add_argument("--ops", default=",".join(OPS), help="comma-separated, of " + str(OPS))
    parser.add_argument("--timeout", type=float, default=1500, help="seconds a bench run")
    args = parser.parse_args()
    sizes = [10_000, 100_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    ops = [op for op in OPS if op in args.ops.split(",")]
    results: dict[tuple[str, int], dict[str, Any] | None] = {}
    runs = []
    for rows in sizes:  # smallest first, one bench at a time
        for op in ops:
            results[op, rows], record = run(op, rows, args.timeout)
            runs.append(record)

    table: dict[str, dict[str, Any]] = {}
    for figure in (f for f in FIGURES if f.op in ops):
        values = []
        for rows in sizes:
            found = results[figure.op, rows]
            values.append(None if found is None else round(float(figure.read(found)), 4))
        first = values[0]
        ratios = [None if not first or v is None else round(v / first, 2) for v in values]
        grown = slope(sizes, values)
        table[figure.name] = {
            "unit": figure.unit,
            "values": values,
            "ratios": ratios[1:],
            "slope": None if grown is None else round(grown, 2),
        }
    names = [label(rows) for rows in sizes]
    header = [*names, *(f"{n}/{names[0]}" for n in names[1:]), "slope"]
    print(f"{'figure':<32}" + "".join(f"{h:>12}" for h in header))
    for name, row in table.items():
        cells = [cell(v, row["unit"]) for v in row["values"]]
        cells += ["-" if r is None else f"{r:.2f}x" for r in row["ratios"]]
        cells.append("-" if row["slope"] is None else f"{row['slope']:.2f}")
        print(f"{name:<32}" + "".join(f"{c:>12}" for c in cells))
    print(json.dumps({"sizes": sizes, "figures": table, "runs": runs}))


if __name__ == "__main__":
    main()
