"""The floor under bench/write.py's ratio: raw `add` vs the same rows in two tables.

Usage: python bench/write_floor.py [--entries 10000] [--batch 1000] [--repeats 5]

A conversation write commits twice: its chunk rows (own text only) to the entries table and
the rows that carry a turn to the bank's carried table (`memory.store.carried`). This bench
takes the rows bench/write.py's raw baseline adds (captured by an untimed membank pass) and,
batch by batch, interleaved, adds them as they are to one fresh table (the raw baseline)
and split as the store splits them into a fresh entries-schema table and a fresh carried
table: no validation, records, look-ups or checks, only the two commits. Their ratio is
the part of bench/write.py's membank / raw that no Python work can remove.
The last line of stdout is a JSON object (`ratio`: two tables / raw, median of repeats).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import lancedb
import pyarrow as pa
from write import DIMS, capture, make_items, raw_table, unit_vectors

from memory.providers.tokens import count_tokens
from memory.store import carried, indices
from memory.store.schema import entries_schema


def with_carried_turn_columns(rows: pa.Table) -> pa.Table:
    """Return captured rows with the carried turn's filter columns (same types; the values
    do not matter for the cost)."""
    rows = rows.append_column("carried_speaker", rows.column("speaker"))
    rows = rows.append_column("carried_tags", rows.column("tags"))
    return rows.append_column("carried_created_at", rows.column("created_at"))


def main() -> None:
    """Run the repeats and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    count_tokens("warm up the tokenizer")
    schema = entries_schema(DIMS)
    ratios = []
    with tempfile.TemporaryDirectory(prefix="membank-write-floor-") as name:
        root = Path(name)
        items = make_items(args.entries)
        captured = capture(root / "capture", items, args.batch, unit_vectors(args.entries))
        for run in range(args.repeats):
            raw, own = raw_table(root / f"raw{run}"), raw_table(root / f"own{run}")
            side = lancedb.connect(str(root / f"side{run}")).create_table(
                "side", schema=carried.SCHEMA
            )
            indices.ensure(side)
            raw_s = two_s = 0.0
            for number, rows in enumerate(captured):
                full = with_carried_turn_columns(rows)
                for which in ("raw", "two") if number % 2 == 0 else ("two", "raw"):
                    started = time.perf_counter()
                    if which == "raw":
                        raw.add(rows)
                        raw_s += time.perf_counter() - started
                    else:
                        entries_rows, carried_rows = carried.split(full)
                        own.add(entries_rows.select(schema.names).cast(schema))
                        side.add(carried_rows)
                        two_s += time.perf_counter() - started
            ratios.append(two_s / raw_s)
            print(f"  run {run + 1}: raw add {raw_s:.3f} s, entries + carried {two_s:.3f} s")
    ratio = statistics.median(ratios)
    print(f"  ratio two tables/raw       {ratio:7.2f}x  (median of {args.repeats})")
    print(json.dumps({"ratios": [round(r, 3) for r in ratios], "ratio": round(ratio, 3)}))


if __name__ == "__main__":
    main()
