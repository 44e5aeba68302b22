"""Compaction sweep evaluation: membank's one scan per bank vs a query per partition.

Usage: python bench/sweep.py [--entries 1000000] [--keys 100000] [--sample 1000] [--dir DIR]

Builds a bank of `--entries` rows over `--keys` partitions (bench/synthetic_bank.py), indexes
it as the store would (BTree on `key`), sets thresholds, then times:
- membank: `memory.compaction.evaluate_bank` (one projected Lance scan of `key` and
  `token_count`, grouped with polars), best of 3;
- baseline: the per-partition query the inline check uses (`partition_size`, an indexed
  `key = ...` filter), over `--sample` partitions, extrapolated to every partition.
Both must agree on which sampled partitions are over. Targets: the full evaluation under
3 s and at least 100x faster than the loop. The last line of stdout is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synthetic_bank import build, context

from memory import banks
from memory.compaction.scan import evaluate_bank, partition_size
from memory.models import BankUpdate

MAX_TOKENS = 1500
MAX_TURNS = 15


def main() -> None:
    """Build the bank, time both evaluations and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--sample", type=int, default=1_000)
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: temp)")
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="membank-sweep-"))
    try:
        figures = run(str(folder / "db"), args.entries, args.keys, args.sample)
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(figures))


def run(uri: str, entries: int, keys: int, sample: int) -> dict[str, object]:
    """Return the benchmark's figures for a fresh bank at `uri`."""
    ctx = context(uri)
    bank, build_seconds = build(ctx, entries=entries, keys=keys)
    started = time.perf_counter()
    ctx.store.maintain(bank.id)  # index every row, as a long-lived table would be
    index_seconds = time.perf_counter() - started
    bank = banks.update(ctx, bank.id, BankUpdate(max_tokens=MAX_TOKENS, max_turns=MAX_TURNS))
    print(f"built {entries:,} entries in {build_seconds:.1f} s, indexed in {index_seconds:.1f} s")

    timings = []
    for _ in range(3):
        started = time.perf_counter()
        evaluation = evaluate_bank(ctx, bank)
        timings.append(time.perf_counter() - started)
    scan_seconds = min(timings)
    print(
        f"membank one-scan evaluation: {evaluation.partitions:,} partitions, "
        f"{len(evaluation.over):,} over, best {scan_seconds:.3f} s "
        f"(runs: {', '.join(f'{t:.3f}' for t in timings)})"
    )

    over = {p.key for p in evaluation.over}
    sampled = [f"conversation-{k}" for k in range(min(sample, keys))]
    started = time.perf_counter()
    loop_over = {key for key in sampled if partition_size(ctx, bank, key).reasons}
    loop_seconds = time.perf_counter() - started
    assert loop_over == over & set(sampled), "the scan and the loop disagree"
    per_query = loop_seconds / len(sampled)
    extrapolated = per_query * evaluation.partitions
    print(
        f"baseline per-partition queries: {len(sampled):,} in {loop_seconds:.2f} s "
        f"({per_query * 1000:.1f} ms each), extrapolated to {evaluation.partitions:,}: "
        f"{extrapolated:.0f} s"
    )
    speedup = extrapolated / scan_seconds
    print(f"speed-up {speedup:.0f}x (target >= 100x); full evaluation target < 3 s")
    return {
        "entries": entries,
        "partitions": evaluation.partitions,
        "over": len(evaluation.over),
        "scan_seconds": round(scan_seconds, 3),
        "loop_sample": len(sampled),
        "loop_seconds": round(loop_seconds, 2),
        "loop_ms_per_partition": round(per_query * 1000, 2),
        "loop_extrapolated_seconds": round(extrapolated, 1),
        "speedup": round(speedup, 1),
        "targets_met": scan_seconds < 3 and speedup >= 100,
    }


if __name__ == "__main__":
    main()
