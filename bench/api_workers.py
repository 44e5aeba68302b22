"""`python bench/api.py --workers [--entries 2000] [--calls 160] [--clients 8] [--rounds 3]
[--text synthetic|locomo]`: search throughput of `membank api --workers 2` against
`--workers 1`, side by side.

One conversation bank (the offline MiniLM int8 embedder) of `--entries` synthetic turns (few
distinct texts: most queries tie on full text over most of the bank, so each search reads it
nearly whole, ~0.2 s of CPU on both cores) or of the LoCoMo sample's 2,760 real turns with its
questions as queries (`--text locomo`, whole-bank searches as an agent's would be); two servers
over the same storage run at once, one with 1 uvicorn worker and one with 2 (with
`MEMBANK_JOBS=prefect`, which more than one worker needs; no job is started, so no Prefect
server is needed). Each of `--rounds` rounds sends `--calls` searches from `--clients` threads
(one keep-alive client each) to each server in turn, the server going first alternating;
searches/s per server per round, and the ratio of the totals. Target: at least 1.6x.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _start(data: str, port: int, workers: int) -> subprocess.Popen[bytes]:
    membank = str(Path(sys.executable).with_name("membank"))
    env = {
        **os.environ,
        "MEMBANK_URI": data,
        "MEMBANK_JOBS": "prefect",
        "PREFECT_API_URL": os.environ.get("PREFECT_API_URL", "http://127.0.0.1:9/api"),
    }
    return subprocess.Popen(
        [membank, "api", "--port", str(port), "--workers", str(workers)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def locomo() -> tuple[list[Any], list[str]]:
    """Return the LoCoMo sample's turns (each conversation a key) and its questions."""
    from bench.locomo import DEFAULT_DATA, load_conversation

    turns: list[Any] = []
    questions: list[str] = []
    for path in sorted(DEFAULT_DATA.glob("*.json")):
        found, asked = load_conversation(path)
        turns += found
        questions += [question.text for question in asked]
    return turns, questions


def run(bench: Any, entries_n: int, calls: int, clients: int, rounds: int, text: str) -> None:
    """Measure and print; `bench` is bench/api.py's module (its bank, server helpers);
    `text`: `synthetic` (`entries_n` support turns, bench/api.py's 6 queries) or `locomo`
    (the LoCoMo sample's 2,760 turns, searched whole-bank with its questions)."""
    from memory import banks, entries
    from memory.accounts import create_key
    from memory.context import Context
    from memory.models import BankCreate
    from memory.store.lance import LanceStore

    data = str(Path(tempfile.mkdtemp(prefix="membank-bench-workers-")) / "db")
    ctx = Context(store=LanceStore(data), account=bench.ACCOUNT)
    bank = banks.create(ctx, BankCreate(name="support", type="conversation", mode="balanced"))
    if text == "locomo":
        turns, queries = locomo()
    else:
        turns, queries = [bench._turn(i) for i in range(entries_n)], list(bench.QUERIES)
    entries.write(ctx, bank, turns)
    key = create_key(ctx, bench.ACCOUNT).key
    servers = {n: (bench._free_port(), None) for n in (1, 2)}
    started = {n: _start(data, port, n) for n, (port, _) in servers.items()}
    rates: dict[int, list[float]] = {1: [], 2: []}
    try:
        for n, (port, _) in servers.items():
            url = f"http://127.0.0.1:{port}"
            bench._wait_up(url, key, started[n])
            bench._concurrent(url, key, bank.id, clients * 4, clients, queries)  # warm them all
        for r in range(rounds):
            for n in (1, 2) if r % 2 == 0 else (2, 1):
                url = f"http://127.0.0.1:{servers[n][0]}"
                rates[n].append(bench._concurrent(url, key, bank.id, calls, clients, queries))
    finally:
        for server in started.values():
            os.killpg(server.pid, signal.SIGINT)
        for server in started.values():
            server.wait(timeout=60)
    one, two = (sum(rates[n]) / len(rates[n]) for n in (1, 2))
    for r in range(rounds):
        print(f"round {r + 1}: 1 worker {rates[1][r]:6.1f}/s, 2 workers {rates[2][r]:6.1f}/s")
    print(f"search with {clients} clients: 1 worker {one:.1f}/s, 2 workers {two:.1f}/s")
    print(f"2 workers / 1 worker: {two / one:.2f}x (target >= 1.6x)")
    figures = {
        "searches_per_s_1": round(one, 2),
        "searches_per_s_2": round(two, 2),
        "speedup_2": round(two / one, 2),
        "clients": clients,
        "text": text,
        "load_average": os.getloadavg()[0],
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    print(json.dumps(figures))
