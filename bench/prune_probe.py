"""Prune strategies side by side: LanceDB's index remap vs membank's segment rebuild.

Usage: python bench/prune_probe.py [--rows 10000 100000 1000000] [--dir DIR]

For each table size a bank is built as `bench/retention.py` builds it (time-ordered
fragments of up to 100,000 rows, key and full-text indices), copied, and on each copy one
row or a third of the rows is deleted and pruned two ways:
- remap: `compact_files(materialize_deletions_threshold=0)`, which remaps every index through
  the rewrite (LanceDB's default), then `cleanup_old_versions(0)`;
- rebuild: `LanceStore.prune`: the compaction defers the remap, and only the index segments
  (up to `segments.SEGMENT_ROWS` rows each) that covered rewritten or deleted fragments are
  rebuilt from the rows left (`memory/store/segments.py`).
Prints one line per case and a JSON line of all timings last.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import retention as retention_bench  # bench/retention.py

from memory.config import get_mode
from memory.store import LanceStore


def prune_remap(store: LanceStore, table: Any) -> None:
    """Make the deletion final the LanceDB way: compaction with index remap, cleanup."""
    table.to_lance().optimize.compact_files(
        materialize_deletions=True, materialize_deletions_threshold=0.0
    )
    table.checkout_latest()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table.to_lance().cleanup_old_versions(older_than=timedelta(0))


def prune_rebuild(store: LanceStore, table: Any) -> None:
    """Make the deletion final through the store (segment rebuild)."""
    store._prune_table(table)


def run(folder: Path, rows: int) -> list[dict[str, object]]:
    """Time both strategies on copies of one `rows`-row bank; return one record per case."""
    base = folder / f"base-{rows}"
    ctx = retention_bench.context(str(base))
    bank = retention_bench.build(ctx, rows, 20)
    dims = get_mode(bank.mode).dims
    results: list[dict[str, object]] = []
    for label, predicate in [("one row", "seq = 1234"), ("a third", f"seq < {rows // 3}")]:
        for name, strategy in [("remap", prune_remap), ("rebuild", prune_rebuild)]:
            work = folder / "work"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(base, work)
            store = LanceStore(str(work))
            table = store.entries_table(bank.id, dims, create=False)
            table.delete(predicate)
            started = time.perf_counter()
            strategy(store, table)
            seconds = time.perf_counter() - started
            assert len(table.list_versions()) == 1
            print(f"{rows:>9,} rows, {label:8s} {name:8s} prune {seconds:6.2f} s", flush=True)
            results.append({"rows": rows, "deleted": label, "strategy": name, "seconds": seconds})
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
