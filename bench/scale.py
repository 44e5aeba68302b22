"""The compaction sweep on 1, 2 and 4 Dask worker processes, summaries from a model with a
fixed latency.

Usage: python bench/scale.py [--partitions 200] [--banks 20] [--latency 0.3] [--quick]

Writes `--partitions` conversation partitions over their `max_turns` threshold, spread over
`--banks` banks with a compaction prompt, once; then, for each worker count, copies that
store and runs the real `membank-compaction-sweep` flow on a running local Dask cluster of
that many worker processes (one thread each; `MEMBANK_TASK_RUNNER=dask`,
`MEMBANK_DASK_ADDRESS`), against a Prefect server this script starts. Every summary goes
through litellm (`openai/...`) to the fake OpenAI-compatible server of the tests
(`tests/fake_llm_server.py`) answering each call after `--latency` seconds: the stand-in for
a real LLM, whose latency, not this machine's 2 cores, bounds a real sweep.

The cluster is started and its workers have imported membank before the clock starts (a
deployment keeps its cluster running); the time is the flow run's, from call to return.
Checked after each run: every partition compacted, one model call per partition, and no
double summary (a partition with two summaries, or an entry both kept and summarised, or
summarised twice). Targets: speedup >= 1.8x at 2 workers and >= 3.2x at 4, 0 double
summaries, and no stalled worker restarted (a restart's wait inflates its run's time:
`comparable` is then false). The last line of stdout is one JSON object. `--quick`: 40
partitions in 8 banks. The machine is shared: figures are noisy.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

TURNS = 6
MAX_TURNS = 4
TARGETS = {2: 1.8, 4: 3.2}


def main() -> None:
    """Build the store, run the sweep at each worker count and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--partitions", type=int, default=200)
    parser.add_argument("--banks", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--quick", action="store_true", help="40 partitions in 8 banks")
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: temp)")
    args = parser.parse_args()
    if args.quick:
        args.partitions, args.banks = 40, 8
    folder = args.dir or Path(tempfile.mkdtemp(prefix="membank-scale-"))
    counts = [int(w) for w in args.workers.split(",")]
    try:
        figures = run(folder, args.partitions, args.banks, args.latency, counts)
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(figures))


@contextmanager
def slow_model(latency: float) -> Iterator[Any]:
    """Serve the fake OpenAI-compatible API, each completion after `latency` seconds."""
    import fake_llm_server as fake

    class Slow(fake._Handler):
        def do_POST(self) -> None:
            time.sleep(latency)
            super().do_POST()

    script = fake.Script(reply="The user discussed orders, amounts and dates.")
    Slow.script = script
    from http.server import ThreadingHTTPServer
    from threading import Thread

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    Thread(target=server.serve_forever, daemon=True).start()
    os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    os.environ["OPENAI_API_KEY"] = "sk-bench-not-a-secret"
    os.environ["MEMBANK_LLM_MODEL"] = "openai/fake-summarizer"
    os.environ.pop("MEMBANK_BLOCK_MODEL_REQUESTS", None)
    try:
        yield script
    finally:
        server.shutdown()
        server.server_close()


def build(uri: str, partitions: int, banks_count: int) -> list[tuple[str, str]]:
    """Write the partitions over their threshold; returns (bank id, key) of each."""
    from compaction_support import make_bank, write_turns

    from memory.clock import SystemClock
    from memory.context import Context
    from memory.models import BankUpdate
    from memory.store.lance import LanceStore
    from memory.testing import HashingEmbedder

    ctx = Context(
        store=LanceStore(uri),
        account="bench",
        clock=SystemClock(),
        embedder=lambda mode: HashingEmbedder(mode.dims),
    )
    from memory import banks

    made: list[tuple[str, str]] = []
    bank_list = [make_bank(ctx, f"chat-{b}") for b in range(banks_count)]
    for p in range(partitions):
        bank = bank_list[p % banks_count]
        key = f"conversation-{p}"
        write_turns(ctx, bank, key, TURNS, start=100 * p)
        made.append((bank.id, key))
    for bank in bank_list:  # set after writing: no write compacts inline
        banks.update(ctx, bank.name, BankUpdate(max_turns=MAX_TURNS))
    return made


def check(uri: str, made: list[tuple[str, str]]) -> tuple[int, int]:
    """Return (partitions compacted, double summaries) of the store at `uri`."""
    from memory import banks, entries
    from memory.context import Context
    from memory.store.lance import LanceStore
    from memory.testing import HashingEmbedder

    ctx = Context(
        store=LanceStore(uri), account="bench", embedder=lambda mode: HashingEmbedder(mode.dims)
    )
    compacted = doubles = 0
    by_id = {b.id: b for b in banks.list_banks(ctx)}
    for bank_id, key in made:
        stored = entries.load(ctx, by_id[bank_id], key)
        summaries = [e for e in stored if e.kind == "summary"]
        covered = Counter(i for s in summaries for i in s.summary_of)
        kept = {e.id for e in stored if e.kind != "summary"}
        compacted += bool(summaries) and len(stored) <= MAX_TURNS
        doubles += (len(summaries) > 1) + sum(1 for i, n in covered.items() if n > 1 or i in kept)
    return compacted, doubles


def run(
    folder: Path, partitions: int, banks_count: int, latency: float, counts: list[int]
) -> dict[str, Any]:
    """Return the figures: seconds per worker count, speedups, double summaries."""
    from lease_support import prefect_server

    with prefect_server() as api_url, slow_model(latency) as script:
        os.environ["PREFECT_API_URL"] = api_url
        os.environ["MEMBANK_TASK_RUNNER"] = "dask"
        from distributed import Client, LocalCluster

        from flows.compaction_sweep import compaction_sweep
        from flows.runners import sweep_task_runner

        source = folder / "source"
        started = time.perf_counter()
        made = build(str(source), partitions, banks_count)
        print(
            f"built {partitions} partitions in {banks_count} banks: "
            f"{time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )
        seconds: dict[int, float] = {}
        stalls: dict[int, int] = {}
        doubles = 0
        for workers in counts:
            data = folder / f"run-{workers}"
            shutil.copytree(source, data)
            cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
            with cluster:
                with Client(cluster) as client:  # closed before the sweep's own client opens
                    client.run(_warm_up, str(data))
                os.environ["MEMBANK_DASK_ADDRESS"] = cluster.scheduler_address
                calls_before = len(script.requests)
                sweep = compaction_sweep.with_options(task_runner=sweep_task_runner())
                began = time.perf_counter()
                restarts = _sweep_watched(functools.partial(sweep, data=str(data)), cluster, script)
                seconds[workers] = time.perf_counter() - began
                calls = len(script.requests) - calls_before
                stalls[workers] = restarts
            compacted, double = check(str(data), made)
            doubles += double
            print(
                f"{workers} workers: {seconds[workers]:.1f} s, {compacted}/{partitions} "
                f"compacted, {calls} model calls, {double} double summaries",
                file=sys.stderr,
            )
    base = seconds[counts[0]]
    figures: dict[str, Any] = {
        "partitions": partitions,
        "banks": banks_count,
        "latency_s": latency,
        "seconds": {str(w): round(s, 2) for w, s in seconds.items()},
        "double_summaries": doubles,
        "stalled_workers_restarted": {str(w): n for w, n in stalls.items()},
    }
    for workers in counts[1:]:
        figures[f"speedup_{workers}"] = round(base / seconds[workers], 2)
    # a restarted worker adds its wait to that run's time: its speedups are not comparable
    figures["comparable"] = not any(stalls.values())
    figures["targets_met"] = (
        doubles == 0
        and figures["comparable"]
        and all(figures.get(f"speedup_{w}", 0) >= t for w, t in TARGETS.items() if w in counts)
    )
    return figures


STALL_SECONDS = 45.0
"""No model call for this long while the sweep runs: a worker is stuck (see `_sweep_watched`)."""


def _sweep_watched(run: Any, cluster: Any, script: Any) -> int:
    """Run the sweep; restart a Dask worker that stalls; returns how many were restarted.

    Now and then a task in a Dask worker never ends while its worker is idle. Session 14
    caught one with py-spy: the task thread parked in LanceDB's `background_loop.run` on a
    future the Rust side never resolved (inside `LanceTable.version`, every LanceDB and
    tokio thread idle), as in lancedb/lancedb#4210 (open); an earlier one, seen with gdb,
    looked like the CPython 3.11 `threading.local`/GIL race (cpython #100892). Dask reruns
    a restarted worker's task elsewhere, and a compaction run twice is safe (the partition
    lock and the journal), so the sweep finishes; the figures say how often it happened,
    and a run with a restart is slower by about STALL_SECONDS.
    """
    import threading

    from distributed import Client

    failure: list[BaseException] = []

    def target() -> None:
        try:
            run()
        except BaseException as exc:  # reported after the join
            failure.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    restarts = 0
    seen = len(script.requests)
    last_change = time.monotonic()
    while thread.is_alive():
        thread.join(timeout=1.0)
        if len(script.requests) != seen:
            seen, last_change = len(script.requests), time.monotonic()
        elif time.monotonic() - last_change > STALL_SECONDS:
            # the banks' evaluations before the summaries call no model, but take seconds
            with Client(cluster) as watcher:
                busy = [w for w, tasks in watcher.processing().items() if tasks]
                if busy:
                    print(f"restarting stalled workers {busy}", file=sys.stderr)
                    watcher.restart_workers(busy)
                    restarts += len(busy)
            last_change = time.monotonic()
    if failure:
        raise failure[0]
    return restarts


def _warm_up(data: str) -> None:
    """Load in a Dask worker what a sweep's tasks use (before the clock starts): the
    libraries, a store opened on `data` with its banks read, the embedder, litellm, the
    token encoding, and Prefect's client."""
    from prefect.client.orchestration import get_client

    import flows.compaction_sweep  # noqa: F401
    from memory.ops import sweeps
    from memory.providers import llm

    llm._litellm()  # imported at a worker's first summary otherwise: seconds, inside the clock
    from memory.providers.tokens import encoding

    encoding()  # cl100k loaded at a worker's first summary check otherwise: ~0.3 s of CPU each
    from memory.wiring import open_context

    ctx = open_context(data, account="bench")
    for bank in sweeps.every_bank(ctx)[:1]:
        sweeps.check(ctx, bank.id)
        from memory.banks import mode_of
        from memory.wiring import embedder_of

        embedder_of(mode_of(bank)).embed(["warm up"])
    with get_client(sync_client=True) as client:
        client.hello()


if __name__ == "__main__":
    main()
