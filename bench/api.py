"""REST API overhead: search and single-entry writes through `membank api` vs in process.

Usage: python bench/api.py [--entries 2000] [--calls 120] [--rounds 4] [--concurrency 4]
                           [--max-seconds 240]

One conversation bank (mode `balanced`, the offline MiniLM int8 embedder, no compaction
trigger) gets `--entries` support-chat turns over 50 keys in one write. Then, interleaved in
`--rounds` rounds of `--calls / --rounds` searches then as many writes, each call made on
both sides one after the other, the side going first alternating (so load from other
processes hits both sides alike, and neither search follows the other side's write):
- in process: `search.search(ctx, bank, SearchQuery(text=..., k=10))` (hybrid) and
  `ops.entries.write(ctx, WriteRequest(bank, [one EntryIn]))` (compaction after it too, as
  the server's),
  on a Context of this process with the server's defaults;
- over HTTP: the same calls as `POST /memory_banks/{id}/search` and
  `POST /memory_banks/{id}/entries`, from this process (the load generator, one keep-alive
  httpx client) to `membank api` in a second process on 127.0.0.1, same storage folder.
p50/p95 latency and calls/s per side (one call at a time), then the API's throughput with
`--concurrency` clients at once. Bounded: `--calls` per side and operation, and every phase
stops at `--max-seconds` in all. Target: API search p95 at most 1.5x in process.

`python bench/api.py --thread-pages [--long 5000] [--short 20] [--repeat 30]` measures
instead a thread page of 20 (issue 21): one bank holds a `--long`-entry thread and a
`--short`-entry one (hashing embedder: embedding is not what is measured); each round reads
a page of 20 of each, interleaved, through `ops.entries.load_page` (the REST route's call:
a cursor into the middle of the long thread, the short thread's first page), and, as the
baseline, the whole-thread load the route did before (`ops.entries.load`, then a slice).
Median and p95 per arm. Target: the long thread's page within 1.5x of the short one's.

`python bench/api.py --user-pages [--long 5000] [--short 20] [--repeat 30]` measures a page
of 20 of a user's long-term memories the same way (`GET /users/{id}/memories`'s call,
`ops.agents.memory_page`): a user with `--long` memories vs one with `--short`, and as the
baseline the route's old way (`ops.agents.list_memories`, every memory of the user, then a
slice). Target: the long user's page within 1.5x of the short one's.

`python bench/api.py --rate-store [--takes 2000]` measures where the rate limits' buckets can
live (issue 21; `bench/api_rates.py`): in process, a shared SQLite file, a LanceDB table.

`python bench/api.py --noisy [--writers 4] [--entry-kb 100] [--reads 40] [--noisy-rounds 3]`
measures a noisy neighbour instead (issue 21; `bench/api_noisy.py`): one account's read p95
while another writes large entries at full speed, against the same reads idle.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx

from memory import banks, entries, search
from memory.accounts import create_key
from memory.context import Context
from memory.models import BankCreate, EntryIn, SearchQuery
from memory.ops import entries as ops_entries
from memory.store.lance import LanceStore

ACCOUNT = "bench"
WORDS = (
    "order",
    "shipped",
    "cracked",
    "tank",
    "refund",
    "invoice",
    "delivery",
    "courier",
    "address",
    "warranty",
    "replacement",
    "battery",
    "screen",
    "charger",
    "login",
    "password",
    "account",
    "billing",
    "upgrade",
    "cancel",
)
QUERIES = [
    "cracked tank replacement",
    "refund for the invoice",
    "courier lost the delivery",
    "password reset login",
    "cancel my subscription",
    "battery warranty claim",
]


def _turn(i: int) -> EntryIn:
    words = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(12))
    who = "Dana" if i % 2 else "Agent"
    return EntryIn(key=f"customer-{i % 50}", speaker=who, content=f"turn {i}: {words}")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _summary(samples: list[float]) -> dict[str, float]:
    total = sum(samples)
    return {
        "n": len(samples),
        "p50_ms": 1000 * statistics.median(samples),
        "p95_ms": 1000 * _pct(samples, 0.95),
        "calls_per_s": len(samples) / total if total else 0.0,
    }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _start_server(data: str, port: int) -> subprocess.Popen[bytes]:
    membank = str(Path(sys.executable).with_name("membank"))
    env = {**os.environ, "MEMBANK_URI": data}
    return subprocess.Popen(
        [membank, "api", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _wait_up(url: str, key: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("membank api exited before serving")
        try:
            if httpx.get(f"{url}/memory_banks", headers={"X-API-Key": key}).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit("membank api did not start in 180 s")


def _concurrent(
    url: str, key: str, bank_id: str, calls: int, clients: int, queries: Sequence[str] = QUERIES
) -> float:
    """Return searches per second with `clients` threads each sending calls/clients."""
    per = max(calls // clients, 1)

    def run(worker: int) -> None:
        with httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=60) as http:
            for i in range(per):
                body = {"text": queries[(worker + i) % len(queries)], "k": 10}
                http.post(f"/memory_banks/{bank_id}/search", json=body).raise_for_status()

    threads = [threading.Thread(target=run, args=(w,)) for w in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return per * clients / (time.perf_counter() - start)


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def thread_pages(long: int, short: int, repeat: int) -> None:
    """Print a page of 20 of a `long`-entry thread vs a `short`-entry one (and the old
    whole-thread load of each), then a JSON line of the figures."""
    from memory.testing import hashing_embedder

    folder = tempfile.mkdtemp(prefix="membank-bench-pages-")
    ctx = Context(store=LanceStore(str(Path(folder) / "db")), account=ACCOUNT)
    ctx = Context(store=ctx.store, account=ACCOUNT, embedder=hashing_embedder)
    bank = banks.create(ctx, BankCreate(name="threads", type="conversation", mode="balanced"))
    for start in range(0, long, 1000):
        batch = [
            EntryIn(key="long", speaker="Dana", content=f"turn {n}: the order 4411 shipped")
            for n in range(start, min(long, start + 1000))
        ]
        entries.write(ctx, bank, batch)
    entries.write(
        ctx, bank, [EntryIn(key="short", speaker="Dana", content=f"turn {n}") for n in range(short)]
    )
    middle = ops_entries.load_page(
        ctx, ops_entries.LoadPageRequest(bank.id, "long", limit=20, offset=long // 2)
    )
    cursor = middle.next_cursor
    arms: dict[str, Callable[[], object]] = {
        "page_long": lambda: ops_entries.load_page(
            ctx, ops_entries.LoadPageRequest(bank.id, "long", limit=20, cursor=cursor)
        ),
        "page_short": lambda: ops_entries.load_page(
            ctx, ops_entries.LoadPageRequest(bank.id, "short", limit=20)
        ),
        "whole_long": lambda: ops_entries.load(ctx, ops_entries.LoadRequest(bank.id, "long")),
        "whole_short": lambda: ops_entries.load(ctx, ops_entries.LoadRequest(bank.id, "short")),
    }
    for work in arms.values():  # warm up: open the table, page the files in
        work()
    samples: dict[str, list[float]] = {name: [] for name in arms}
    for round_ in range(repeat):
        names = list(arms) if round_ % 2 == 0 else list(reversed(arms))
        for name in names:
            samples[name].append(_timed(arms[name]))
    result = {name: _summary(values) for name, values in samples.items()}
    for name, figures in result.items():
        print(f"{name:12s} p50 {figures['p50_ms']:8.1f} ms   p95 {figures['p95_ms']:8.1f} ms")
    ratio = result["page_long"]["p50_ms"] / result["page_short"]["p50_ms"]
    before = result["whole_long"]["p50_ms"] / result["whole_short"]["p50_ms"]
    print(f"page of 20, {long}-entry thread / {short}-entry thread: {ratio:.2f}x (target <= 1.5x)")
    print(f"before (whole thread loaded per page): {before:.2f}x")
    print(
        json.dumps(
            {
                **result,
                "page_ratio": ratio,
                "whole_load_ratio": before,
                "long": long,
                "short": short,
                "load_average": os.getloadavg()[0],
            }
        )
    )


def _interleaved(arms: dict[str, Callable[[], object]], repeat: int) -> dict[str, dict[str, float]]:
    """Time each arm `repeat` times, interleaved (the order reversed every other round)."""
    for work in arms.values():  # warm up: open the table, page the files in
        work()
    samples: dict[str, list[float]] = {name: [] for name in arms}
    for round_ in range(repeat):
        names = list(arms) if round_ % 2 == 0 else list(reversed(arms))
        for name in names:
            samples[name].append(_timed(arms[name]))
    result = {name: _summary(values) for name, values in samples.items()}
    for name, figures in result.items():
        print(f"{name:12s} p50 {figures['p50_ms']:8.1f} ms   p95 {figures['p95_ms']:8.1f} ms")
    return result


def user_pages(long: int, short: int, repeat: int) -> None:
    """Print a page of 20 of a user with `long` memories vs one with `short` (and the old
    whole-list read of each), then a JSON line of the figures."""
    from memory.agents import longterm
    from memory.ops import agents
    from memory.testing import hashing_embedder

    folder = tempfile.mkdtemp(prefix="membank-bench-memories-")
    ctx = Context(
        store=LanceStore(str(Path(folder) / "db")), account=ACCOUNT, embedder=hashing_embedder
    )
    bank = longterm.memory_bank(ctx, create=True)
    assert bank is not None
    for user, count in (("long", long), ("short", short)):
        for start in range(0, count, 1000):
            batch = [
                longterm.memory_entry(user, f"fact {n}: prefers the {WORDS[n % len(WORDS)]}")
                for n in range(start, min(count, start + 1000))
            ]
            entries.write(ctx, bank, batch)
    middle = agents.memory_page(ctx, agents.MemoryPageRequest(user="long", offset=long // 2))
    cursor = middle.next_cursor
    arms: dict[str, Callable[[], object]] = {
        "page_long": lambda: agents.memory_page(
            ctx, agents.MemoryPageRequest(user="long", limit=20, cursor=cursor)
        ),
        "page_short": lambda: agents.memory_page(
            ctx, agents.MemoryPageRequest(user="short", limit=20)
        ),
        "whole_long": lambda: agents.list_memories(
            ctx, agents.ListMemoriesRequest(user="long")
        ).memories[long // 2 : long // 2 + 20],
        "whole_short": lambda: agents.list_memories(
            ctx, agents.ListMemoriesRequest(user="short")
        ).memories[:20],
    }
    result = _interleaved(arms, repeat)
    ratio = result["page_long"]["p50_ms"] / result["page_short"]["p50_ms"]
    before = result["whole_long"]["p50_ms"] / result["whole_short"]["p50_ms"]
    print(f"page of 20, user of {long} memories / of {short}: {ratio:.2f}x (target <= 1.5x)")
    print(f"before (every memory of the user read per page): {before:.2f}x")
    print(
        json.dumps(
            {
                **result,
                "page_ratio": ratio,
                "whole_list_ratio": before,
                "long": long,
                "short": short,
                "load_average": os.getloadavg()[0],
            }
        )
    )


def main() -> None:
    from bench import api_noisy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thread-pages", action="store_true", help="measure thread pages only")
    parser.add_argument("--noisy", action="store_true", help="measure a noisy neighbour only")
    parser.add_argument("--user-pages", action="store_true", help="measure memory pages only")
    parser.add_argument("--rate-store", action="store_true", help="rate bucket stores only")
    parser.add_argument("--takes", type=int, default=2000, help="tokens taken per store")
    parser.add_argument("--long", type=int, default=5000)
    parser.add_argument("--short", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--max-seconds", type=float, default=240.0)
    api_noisy.add_arguments(parser)
    parser.add_argument("--workers", action="store_true", help="1 vs 2 API workers only")
    parser.add_argument("--clients", type=int, default=8, help="clients of --workers")
    parser.add_argument(
        "--text",
        choices=("synthetic", "locomo"),
        default="synthetic",
        help="--workers: the synthetic support turns, or the LoCoMo sample's turns and questions",
    )
    args = parser.parse_args()
    if args.rate_store:
        from bench import api_rates

        api_rates.run(args.takes)
        return
    if args.noisy:
        api_noisy.run(args.writers, args.entry_kb, args.reads, args.noisy_rounds)
        return
    if args.workers:  # bench/api_workers.py (issue 20)
        import api_workers

        api_workers.run(
            sys.modules[__name__], args.entries, args.calls, args.clients, args.rounds, args.text
        )
        return
    if args.thread_pages:
        thread_pages(args.long, args.short, args.repeat)
        return
    if args.user_pages:
        user_pages(args.long, args.short, args.repeat)
        return
    folder = tempfile.mkdtemp(prefix="membank-bench-api-")
    data = str(Path(folder) / "db")
    ctx = Context(store=LanceStore(data), account=ACCOUNT)  # the defaults, as the server
    bank = banks.create(ctx, BankCreate(name="support", type="conversation", mode="balanced"))
    entries.write(ctx, bank, [_turn(i) for i in range(args.entries)])
    key = create_key(ctx, ACCOUNT).key
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server = _start_server(data, port)
    samples: dict[str, list[float]] = {
        n: [] for n in ("search_local", "search_api", "write_local", "write_api")
    }
    try:
        _wait_up(url, key, server)
        http = httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=60)
        search_path = f"/memory_banks/{bank.id}/search"
        write_path = f"/memory_banks/{bank.id}/entries"
        for i in range(6):  # warm up both sides: the embedder, the tables, the connection
            search.search(ctx, bank, SearchQuery(text=QUERIES[i], k=10))
            http.post(search_path, json={"text": QUERIES[i], "k": 10}).raise_for_status()
        deadline = time.monotonic() + args.max_seconds
        block = max(args.calls // args.rounds, 1)
        written = args.entries
        for _ in range(args.rounds):
            # searches first (no write between them, so neither side reloads the other's new
            # table version), then writes; within each, the side that goes first alternates
            for i in range(block):
                if time.monotonic() > deadline:
                    break
                text = QUERIES[i % len(QUERIES)]
                for side in ("local", "api") if i % 2 else ("api", "local"):
                    clock = time.perf_counter()
                    if side == "local":
                        search.search(ctx, bank, SearchQuery(text=text, k=10))
                    else:
                        http.post(search_path, json={"text": text, "k": 10}).raise_for_status()
                    samples[f"search_{side}"].append(time.perf_counter() - clock)
            for i in range(block):
                if time.monotonic() > deadline:
                    break
                for side in ("local", "api") if i % 2 else ("api", "local"):
                    item = _turn(written)
                    written += 1
                    clock = time.perf_counter()
                    if side == "local":
                        ops_entries.write(ctx, ops_entries.WriteRequest(bank.id, [item]))
                    else:
                        body = item.model_dump(include={"key", "speaker", "content"})
                        http.post(write_path, json=body).raise_for_status()
                    samples[f"write_{side}"].append(time.perf_counter() - clock)
        concurrent = _concurrent(url, key, bank.id, args.calls, args.concurrency)
        http.close()
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=30)
    result = {name: _summary(values) for name, values in samples.items()}
    for name, figures in result.items():
        print(
            f"{name:13} n={figures['n']:4}  p50 {figures['p50_ms']:7.1f} ms  "
            f"p95 {figures['p95_ms']:7.1f} ms  {figures['calls_per_s']:6.1f} calls/s"
        )
    ratio = result["search_api"]["p95_ms"] / result["search_local"]["p95_ms"]
    write_ratio = result["write_api"]["p95_ms"] / result["write_local"]["p95_ms"]
    print(f"API search with {args.concurrency} clients at once: {concurrent:.1f} searches/s")
    print(f"search p95 API / in process: {ratio:.2f}x (target <= 1.5x)")
    print(f"write p95 API / in process: {write_ratio:.2f}x")
    print(
        json.dumps(
            {
                **result,
                "search_p95_ratio": ratio,
                "write_p95_ratio": write_ratio,
                "concurrent_searches_per_s": concurrent,
                "load_average": os.getloadavg()[0],
            }
        )
    )


if __name__ == "__main__":
    main()
