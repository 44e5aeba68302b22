"""Where the rate limits' buckets can live (issue 21): the cost of taking one token.

Usage: python bench/api.py --rate-store [--takes 2000]   (or python bench/api_rates.py)

Three stores of the same token bucket, each taking `--takes` tokens of 50 keys in turn:
- memory: a dict in the process behind a lock (what the server had: each process counts its
  own, so N processes allow N times the limit);
- sqlite: `memory.api.rate_store.SharedBuckets` (the chosen one: one UPSERT per take in a
  WAL file every process of the machine shares), alone and with a second process taking
  tokens of the same keys at the same time (`sqlite_2proc`: the wall time of both over
  their takes together);
- lance: a one-table LanceDB upsert (`merge_insert` on key id) per take, as the idempotency
  rows are kept (a table version per request), on `--takes // 20` takes (it is slow).
Median and p95 per take, and takes/s. The last line is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lancedb
import pyarrow as pa

from memory.api.rate_store import SharedBuckets

KEYS = [f"key{i}" for i in range(50)]


class MemoryBuckets:
    """The in-process bucket the server had before (a dict behind a lock)."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit, self.rate = limit, limit / window
        self.state: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def take(self, key_id: str) -> bool:
        with self.lock:
            moment = time.time()
            tokens, last = self.state.get(key_id, (float(self.limit), moment))
            tokens = min(float(self.limit), tokens + (moment - last) * self.rate)
            allowed = tokens >= 1.0
            self.state[key_id] = (tokens - 1.0 if allowed else tokens, moment)
            return allowed


class LanceBuckets:
    """The same bucket as rows of a LanceDB table, one upsert per take."""

    SCHEMA = pa.schema([("key_id", pa.string()), ("tokens", pa.float64()), ("at", pa.float64())])

    def __init__(self, folder: str, limit: int, window: float) -> None:
        self.limit, self.rate = limit, limit / window
        self.table = lancedb.connect(folder).create_table("rates", schema=self.SCHEMA)

    def take(self, key_id: str) -> bool:
        moment = time.time()
        found = self.table.search().where(f"key_id = '{key_id}'").limit(1).to_list()
        tokens = float(self.limit) if not found else found[0]["tokens"]
        last = moment if not found else found[0]["at"]
        tokens = min(float(self.limit), tokens + (moment - last) * self.rate)
        allowed = tokens >= 1.0
        row = {"key_id": key_id, "tokens": tokens - 1.0 if allowed else tokens, "at": moment}
        data = pa.Table.from_pylist([row], schema=self.SCHEMA)
        self.table.merge_insert(
            "key_id"
        ).when_matched_update_all().when_not_matched_insert_all().execute(data)
        return allowed


def _times(take: object, takes: int) -> list[float]:
    samples = []
    for i in range(takes):
        started = time.perf_counter()
        take(KEYS[i % len(KEYS)])  # type: ignore[operator]
        samples.append(time.perf_counter() - started)
    return samples


def _summary(samples: list[float], wall: float | None = None) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(samples),
        "p50_us": round(statistics.median(ordered) * 1e6, 1),
        "p95_us": round(ordered[int(0.95 * (len(ordered) - 1))] * 1e6, 1),
        "takes_per_s": round(len(samples) / (wall if wall is not None else sum(samples)), 1),
    }


def _other_process(path: str, takes: int, ready: object, go: object) -> None:
    buckets = SharedBuckets(Path(path), 1_000_000, 60.0)
    ready.set()  # type: ignore[attr-defined]
    go.wait()  # type: ignore[attr-defined]
    _times(buckets.take, takes)


def run(takes: int) -> dict[str, object]:
    """Measure and print each store's cost per take; return the figures."""
    folder = tempfile.mkdtemp(prefix="membank-bench-rates-")
    limit, window = 1_000_000, 60.0  # never refused: the cost of counting is what is timed
    result: dict[str, object] = {}
    result["memory"] = _summary(_times(MemoryBuckets(limit, window).take, takes))
    path = Path(folder) / "rates.sqlite"
    shared = SharedBuckets(path, limit, window)
    shared.take(KEYS[0])
    result["sqlite"] = _summary(_times(shared.take, takes))
    spawn = multiprocessing.get_context("spawn")
    ready, go = spawn.Event(), spawn.Event()
    other = spawn.Process(target=_other_process, args=(str(path), takes, ready, go))
    other.start()
    ready.wait(120)
    go.set()
    started = time.perf_counter()
    mine = _times(shared.take, takes)
    other.join()
    wall = time.perf_counter() - started
    both = _summary(mine)
    both["takes_per_s"] = round(2 * takes / wall, 1)
    result["sqlite_2proc"] = both
    lance = LanceBuckets(str(Path(folder) / "lance"), limit, window)
    lance.take(KEYS[0])
    result["lance"] = _summary(_times(lance.take, max(takes // 20, 10)))
    for name, figures in result.items():
        assert isinstance(figures, dict)
        print(
            f"{name:13s} p50 {figures['p50_us']:9.1f} us   p95 {figures['p95_us']:9.1f} us   "
            f"{figures['takes_per_s']:9.1f} takes/s"
        )
    result["load_average"] = os.getloadavg()[0]
    print(json.dumps(result))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--takes", type=int, default=2000)
    run(parser.parse_args().takes)


if __name__ == "__main__":
    main()
