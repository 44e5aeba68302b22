"""Probe: can Python's per-entry work overlap LanceDB's write of the rows before it?

Usage: python bench/write_overlap_probe.py [--rows 1000] [--python-ms 30] [--repeats 15]

membank's write spends more time in Python (validation, token counts, records, Arrow
columns) than raw `table.add` spends storing the rows (bench/write.py). If the store wrote
one slice while Python built the next, the two would overlap and a write would cost about
the larger of the two instead of their sum. This measures three ways of storing `--rows`
rows (384-dim vectors, 40-word texts) behind `--python-ms` of pure-Python work per batch
(a busy loop holding the GIL, standing in for building the rows):

- serial: build everything, then one `table.add` (what membank does);
- streamed: `table.add` of a `RecordBatchReader` whose generator builds 4 slices lazily;
- threaded: each slice written as uncommitted fragments on a worker thread
  (`lance.fragment.write_fragments`) while the next is built, then one Append commit;

and a raw `table.add` alone. Medians over `--repeats` batches; the last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import lance
import lancedb
import numpy as np
import pyarrow as pa
from lance.fragment import write_fragments

DIMS = 384
SLICES = 4


def make_rows(count: int) -> pa.Table:
    """Return `count` rows shaped like membank's: id, key, text and a vector."""
    rng = np.random.default_rng(1)
    words = ["alpha", "beta", "gamma", "delta", "lisbon", "invoice", "thursday"]
    vectors = rng.standard_normal((count, DIMS), dtype=np.float32)
    return pa.table(
        {
            "id": [f"{i:032x}" for i in range(count)],
            "key": [f"k{i % 100}" for i in range(count)],
            "text": [" ".join(random.choices(words, k=40)) for _ in range(count)],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIMS),
        }
    )


def busy(milliseconds: float) -> None:
    """Hold the GIL for `milliseconds` (Python work such as building records)."""
    end = time.perf_counter() + milliseconds / 1000
    while time.perf_counter() < end:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--python-ms", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    rows, work = make_rows(args.rows), args.python_ms
    step = max(1, args.rows // SLICES)
    db = lancedb.connect(tempfile.mkdtemp(prefix="overlap-"))
    serial_table = db.create_table("serial", rows.slice(0, 1))
    streamed_table = db.create_table("streamed", rows.slice(0, 1))
    dataset = db.create_table("threaded", rows.slice(0, 1)).to_lance()
    pool = ThreadPoolExecutor(1)
    times: dict[str, list[float]] = {"serial": [], "streamed": [], "threaded": [], "raw": []}

    def slices() -> Iterator[pa.RecordBatch]:
        for start in range(0, args.rows, step):
            busy(work / SLICES)
            yield from rows.slice(start, step).to_batches()

    for _ in range(args.repeats):
        started = time.perf_counter()
        busy(work)
        serial_table.add(rows)
        times["serial"].append(time.perf_counter() - started)

        started = time.perf_counter()
        streamed_table.add(pa.RecordBatchReader.from_batches(rows.schema, slices()))
        times["streamed"].append(time.perf_counter() - started)

        started = time.perf_counter()
        pending = []
        for start in range(0, args.rows, step):
            busy(work / SLICES)
            part = rows.slice(start, step)
            pending.append(pool.submit(write_fragments, part, dataset.uri, schema=dataset.schema))
        fragments = [fragment for future in pending for fragment in future.result()]
        operation = lance.LanceOperation.Append(fragments)
        dataset = lance.LanceDataset.commit(dataset.uri, operation, read_version=dataset.version)
        times["threaded"].append(time.perf_counter() - started)

        started = time.perf_counter()
        serial_table.add(rows)
        times["raw"].append(time.perf_counter() - started)

    medians = {name: round(statistics.median(values) * 1000, 2) for name, values in times.items()}
    print(f"{args.rows} rows behind {work} ms of Python work, median of {args.repeats} (ms):")
    for name, value in medians.items():
        print(f"  {name:<9} {value:8.2f}")
    print(json.dumps({"rows": args.rows, "python_ms": work, "median_ms": medians}))


if __name__ == "__main__":
    main()
