"""Noisy neighbour (issue 21): one account's reads while another writes large entries.

Usage: python bench/api.py --noisy [--writers 4] [--entry-kb 100] [--reads 40] [--noisy-rounds 3]
       (or python bench/api_noisy.py with the same options)

One `membank api` server (second process, 127.0.0.1, the offline MiniLM int8 embedder) over
a fresh store with two accounts. The quiet account has a conversation bank of 600 short
support turns over 50 keys; the noisy one has a bank of its own. Each of `--noisy-rounds`
rounds has two phases, the idle one first in even rounds and second in odd ones (so load
from other processes drifts over both alike):
- idle: the quiet account makes `--reads` reads one at a time, alternately a hybrid search
  (`POST /memory_banks/{id}/search`, k=10) and a thread page of 20
  (`GET /memory_banks/{id}/entries?key=&limit=20`);
- noisy: the same reads while `--writers` clients of the noisy account write `--entry-kb`
  kB entries (`POST /memory_banks/{id}/entries`, each a new key) as fast as the server
  answers them (a 429 is counted and retried after its `Retry-After`).
Per phase: the quiet reads' p50/p95; during noise also the noisy account's writes (done,
429s, kB/s). Target: the quiet account's read p95 under noise within 2x of idle. The last
line is one JSON object with `ratio` (noisy p95 / idle p95).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx

from bench.api import QUERIES, WORDS, _free_port, _pct, _start_server, _turn, _wait_up
from memory import banks, entries
from memory.accounts import create_key
from memory.context import Context
from memory.models import BankCreate
from memory.store.lance import LanceStore

QUIET, NOISY = "quiet", "noisy"
VOCABULARY = (
    *WORDS,
    *["the", "customer", "asked", "about", "their", "parcel", "which", "arrived", "late", "and"],
)


def _large_text(kb: int, seed: int) -> str:
    """Return about `kb` kB of sentences of common support words (each text its own)."""
    rng = random.Random(seed)
    sentences: list[str] = []
    size = 0
    while size < kb * 1000:
        sentence = " ".join(rng.choice(VOCABULARY) for _ in range(14)).capitalize() + "."
        sentences.append(sentence)
        size += len(sentence) + 1
    return " ".join(sentences)


class Writers:
    """`count` threads of the noisy account writing large entries until `stop()`."""

    def __init__(self, url: str, key: str, bank_id: str, count: int, kb: int) -> None:
        self.url, self.key, self.bank_id, self.kb = url, key, bank_id, kb
        self.texts = [_large_text(kb, seed) for seed in range(8)]
        self.done = 0
        self.refused = 0
        self.failed = 0
        self.last_failure = ""
        self._running = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(n,)) for n in range(count)]
        self._started = 0.0
        self.seconds = 0.0

    def start(self) -> None:
        self._running.set()
        self._started = time.perf_counter()
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._running.clear()
        for thread in self._threads:
            thread.join()
        self.seconds = time.perf_counter() - self._started

    def _run(self, worker: int) -> None:
        path = f"/memory_banks/{self.bank_id}/entries"
        with httpx.Client(base_url=self.url, headers={"X-API-Key": self.key}, timeout=300) as http:
            n = 0
            while self._running.is_set():
                text = self.texts[(worker + n) % len(self.texts)]
                body = {"key": f"bulk-{worker}-{n}", "content": text}
                n += 1
                try:
                    answer = http.post(path, json=body)
                except httpx.TransportError:
                    with self._lock:
                        self.failed += 1
                    continue
                with self._lock:
                    if answer.status_code == 201:
                        self.done += 1
                    elif answer.status_code == 429:
                        self.refused += 1
                    else:
                        self.failed += 1
                        self.last_failure = f"{answer.status_code} {answer.text[:200]}"
                if answer.status_code == 429:
                    wait = float(answer.headers.get("Retry-After", "1") or 1)
                    self._running.wait(0)  # stay responsive to stop()
                    time.sleep(min(wait, 1.0))


def _reads(http: httpx.Client, bank_id: str, count: int, offset: int) -> list[float]:
    samples: list[float] = []
    for i in range(count):
        n = offset + i
        started = time.perf_counter()
        if n % 2 == 0:
            body = {"text": QUERIES[n % len(QUERIES)], "k": 10}
            http.post(f"/memory_banks/{bank_id}/search", json=body).raise_for_status()
        else:
            params: dict[str, str | int] = {"key": f"customer-{n % 30}", "limit": 20}
            http.get(f"/memory_banks/{bank_id}/entries", params=params).raise_for_status()
        samples.append(time.perf_counter() - started)
    return samples


def _figures(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(samples),
        "p50_ms": 1000 * ordered[len(ordered) // 2],
        "p95_ms": 1000 * _pct(samples, 0.95),
        "max_ms": 1000 * ordered[-1],
    }


def run(writers: int, entry_kb: int, reads: int, rounds: int) -> dict[str, object]:
    """Measure and print the quiet account's reads idle vs under noise; return the figures."""
    folder = tempfile.mkdtemp(prefix="membank-bench-noisy-")
    data = str(Path(folder) / "db")
    store = LanceStore(data)
    quiet_ctx = Context(store=store, account=QUIET)
    noisy_ctx = Context(store=store, account=NOISY)
    quiet_bank = banks.create(
        quiet_ctx, BankCreate(name="support", type="conversation", mode="balanced")
    )
    entries.write(quiet_ctx, quiet_bank, [_turn(i) for i in range(600)])
    # the turns of _turn use 50 keys; customer-0..29 are the threads read
    noisy_bank = banks.create(noisy_ctx, BankCreate(name="bulk", type="general", mode="balanced"))
    quiet_key = create_key(quiet_ctx, QUIET, scopes=["read"]).key
    noisy_key = create_key(noisy_ctx, NOISY).key
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server = _start_server(data, port)
    idle: list[float] = []
    noisy: list[float] = []
    written = refused = failed = 0
    write_seconds = 0.0
    try:
        _wait_up(url, quiet_key, server)
        http = httpx.Client(base_url=url, headers={"X-API-Key": quiet_key}, timeout=300)
        _reads(http, quiet_bank.id, 8, 0)  # warm up: embedder, tables, connection
        warm = Writers(url, noisy_key, noisy_bank.id, 1, entry_kb)
        warm.start()
        time.sleep(2.0)
        warm.stop()
        for round_ in range(rounds):
            order = ("idle", "noisy") if round_ % 2 == 0 else ("noisy", "idle")
            for phase in order:
                if phase == "idle":
                    idle += _reads(http, quiet_bank.id, reads, round_ * reads)
                    continue
                noise = Writers(url, noisy_key, noisy_bank.id, writers, entry_kb)
                noise.start()
                time.sleep(1.0)  # the writers are at full speed before reads start
                noisy += _reads(http, quiet_bank.id, reads, round_ * reads)
                noise.stop()
                if noise.failed:
                    print(f"{noise.failed} noisy writes failed, last: {noise.last_failure}")
                written += noise.done
                refused += noise.refused
                failed += noise.failed
                write_seconds += noise.seconds
        http.close()
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=60)
    idle_f, noisy_f = _figures(idle), _figures(noisy)
    ratio = noisy_f["p95_ms"] / idle_f["p95_ms"]
    for name, figures in (("quiet reads, idle", idle_f), ("quiet reads, noisy", noisy_f)):
        print(
            f"{name:20s} n={figures['n']:4.0f}  p50 {figures['p50_ms']:7.1f} ms  "
            f"p95 {figures['p95_ms']:7.1f} ms  max {figures['max_ms']:7.1f} ms"
        )
    rate = written * entry_kb / write_seconds if write_seconds else 0.0
    print(
        f"noisy writes: {written} of {entry_kb} kB in {write_seconds:.1f} s "
        f"({rate:.0f} kB/s), {refused} answered 429, {failed} failed"
    )
    print(f"quiet read p95 under noise / idle: {ratio:.2f}x (target <= 2x)")
    result: dict[str, object] = {
        "idle": idle_f,
        "noisy": noisy_f,
        "writes": written,
        "writes_429": refused,
        "writes_failed": failed,
        "write_kb_per_s": rate,
        "writers": writers,
        "entry_kb": entry_kb,
        "load_average": os.getloadavg()[0],
        "ratio": ratio,
    }
    print(json.dumps(result))
    return result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add this benchmark's options to `parser`."""
    parser.add_argument("--writers", type=int, default=4, help="noisy clients at once")
    parser.add_argument("--entry-kb", type=int, default=100, help="size of each noisy entry")
    parser.add_argument("--reads", type=int, default=40, help="quiet reads per phase")
    parser.add_argument("--noisy-rounds", type=int, default=3, help="idle+noisy rounds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args()
    run(args.writers, args.entry_kb, args.reads, args.noisy_rounds)


if __name__ == "__main__":
    main()
