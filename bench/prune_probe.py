"""Final deletion on two index layouts: one index segment vs bounded segments (the store's).

Usage: python bench/prune_probe.py [--rows 10000 100000 1000000] [--dir DIR]

For each table size a bank is built as `bench/retention.py` builds it (the store's layout:
each index segment covers one fragment of up to `StoreTuning.segment_rows` rows), copied,
and on each copy one row or a third of the rows is deleted and the deletion made final by
`LanceStore.prune` (`compact_files(materialize_deletions_threshold=0)`, whose index remap
rewrites the segments over the rewritten fragments, then `cleanup_old_versions(0)`):
- bounded: the store's layout as built;
- one segment: the same table with each index rebuilt as a single segment first
  (`create_index(replace=True)`), so every remap rewrites the whole index.
Prints one line per case and a JSON line of all timings last.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import retention as retention_bench  # bench/retention.py

from memory.store import indices
from memory.store.lance import LanceStore


def one_segment(table: Any) -> None:
    """Rebuild both indices as one segment each over the whole table."""
    indices.create_key_index(table)
    indices.create_fts_index(table)
    table.checkout_latest()


def bounded(table: Any) -> None:
    """Keep the store's layout (one segment per fragment)."""


def run(folder: Path, rows: int) -> list[dict[str, object]]:
    """Time both layouts on copies of one `rows`-row bank; return one record per case."""
    base = folder / f"base-{rows}"
    ctx = retention_bench.context(str(base))
    bank = retention_bench.build(ctx, rows, 20)
    results: list[dict[str, object]] = []
    for label, predicate in [("one row", "seq = 1234"), ("a third", f"seq < {rows // 3}")]:
        for name, layout in [("one segment", one_segment), ("bounded", bounded)]:
            work = folder / "work"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(base, work)
            store = LanceStore(str(work))
            table = store.entries_table(bank.id)
            layout(table)
            table.delete(predicate)
            started = time.perf_counter()
            store.prune(bank.id)
            seconds = time.perf_counter() - started
            assert len(table.list_versions()) == 1
            print(f"{rows:>9,} rows, {label:8s} {name:11s} prune {seconds:6.2f} s", flush=True)
            results.append({"rows": rows, "deleted": label, "layout": name, "seconds": seconds})
    return results


def main() -> None:
    """Parse the arguments, run every size and print the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp)")
    args = parser.parse_args()
    folder = Path(args.dir or tempfile.mkdtemp(prefix="membank-prune-"))
    try:
        results = [r for rows in args.rows for r in run(folder, rows)]
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps([{**r, "seconds": round(float(str(r["seconds"])), 3)} for r in results]))


if __name__ == "__main__":
    main()
