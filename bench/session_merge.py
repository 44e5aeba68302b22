"""Session-summary merging: the batch deployment and one flow run per conversation vs a
4-thread loop calling the merge function.

Usage: python bench/session_merge.py [--conversations 40] [--pairs 40] [--threads 4]
                                     [--arms loop,batch] [--dir DIR]

Writes `--conversations` ended conversations (three turns each, one unique marker per
conversation) to working memory, spread round-robin over `--pairs` user x agent pairs,
then copies that store once per arm and merges every conversation into its pair's rolling
summary:
- loop: `memory.agents.session.merge_conversation` called by `--threads` threads;
- batch (issue 20): every conversation ends at once through `end_conversation` with the
  batching trigger (`flows.session_merge`: 0.1 s quiet, at most a 0.5 s window), which
  schedules one run of the `membank-session-merge-batch/merge-batch` deployment (applied to
  a local Prefect test server); that flow run is then executed in this process as a worker
  executes it (`prefect.flow_engine.run_flow` on the scheduled run), its merges as tasks on
  `--threads` threads. Timed from the first end_conversation to the run's end; only a process
  worker's start-up (~8 s, once per batch, not per conversation) is left out;
- flow: `session_merge_flow` called once per conversation, `--threads` runs at a time (the
  per-conversation deployment's flow, as before issue 20).
All use the offline extractive summarizer and the MiniLM embedder (`open_context`). For
each arm it checks that every conversation is recorded in its pair's summary exactly once
(conversations and covered message ids, no duplicates, one summary per pair) and counts the
markers found in the summary text (the extractive summarizer keeps what fits its budget,
so a marker may be dropped, never duplicated). Target: batch within 1.5x of loop. The last
line of stdout is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from memory.agents import session, working
from memory.agents.turns import Turn
from memory.wiring import open_context

ACCOUNT = "bench"


def pair_of(index: int, pairs: int) -> tuple[str, str]:
    """Return the (user, agent) of conversation `index`: pairs round-robin, 2 agents a user."""
    pair = index % pairs
    return f"user-{pair // 2}", f"agent-{pair % 2}"


def marker(index: int) -> str:
    return f"zq{index:05d}x"


def build(uri: str, conversations: int, pairs: int) -> None:
    """Write the ended conversations to working memory."""
    ctx = open_context(uri, account=ACCOUNT)
    for index in range(conversations):
        user, agent = pair_of(index, pairs)
        turns = [
            Turn(role="user", content=f"Please note code {marker(index)} for my order {index}."),
            Turn(role="assistant", content=f"Noted, order {index} is under {marker(index)}."),
            Turn(role="user", content="Thanks, that is all."),
        ]
        working.add_turns(ctx, f"conv-{index}", turns, user=user, agent=agent)


def loop_arm(uri: str, conversations: int, pairs: int, threads: int) -> float:
    ctx = open_context(uri, account=ACCOUNT)

    def merge(index: int) -> None:
        user, agent = pair_of(index, pairs)
        session.merge_conversation(ctx, user=user, agent=agent, conversation=f"conv-{index}")

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(merge, range(conversations)))
    return time.perf_counter() - started


def batch_arm(uri: str, conversations: int, pairs: int, threads: int) -> float:
    from prefect.deployments import run_deployment
    from prefect.flow_engine import run_flow
    from prefect.testing.utilities import prefect_test_harness

    from flows import session_merge as merging

    merging.session_merge_batch_flow.task_runner = merging.ThreadPoolTaskRunner(max_workers=threads)
    scheduled: list[Any] = []

    def schedule(items: list[Any], data: str | None, account: str) -> None:
        parameters = {"merges": [i.model_dump() for i in items], "data": data, "account": account}
        scheduled.append(run_deployment(merging.BATCH_DEPLOYMENT, parameters=parameters, timeout=0))

    with prefect_test_harness(server_startup_timeout=180):
        merging.session_merge_batch_flow.to_deployment(name="merge-batch").apply()
        ctx = open_context(uri, account=ACCOUNT)
        trigger = merging._Batcher(uri, merging.BATCH_WINDOW_SECONDS, schedule)
        started = time.perf_counter()
        for index in range(conversations):
            user, agent = pair_of(index, pairs)
            session.end_conversation(
                ctx, user=user, agent=agent, conversation=f"conv-{index}", trigger=trigger
            )
        while not scheduled:  # the window closes, the batch is scheduled
            time.sleep(0.01)
        (flow_run,) = scheduled
        state = run_flow(
            merging.session_merge_batch_flow,
            flow_run=flow_run,
            parameters=flow_run.parameters,
            return_type="state",
        )
        seconds = time.perf_counter() - started
        if not state.is_completed():
            raise SystemExit(f"the batch run ended {state.type}: {state.message}")
        return seconds


def flow_arm(uri: str, conversations: int, pairs: int, threads: int) -> float:
    from prefect.testing.utilities import prefect_test_harness

    from flows.session_merge import session_merge_flow

    def run(index: int) -> None:
        user, agent = pair_of(index, pairs)
        state = session_merge_flow(
            user, agent, f"conv-{index}", data=uri, account=ACCOUNT, return_state=True
        )
        if not state.is_completed():
            raise SystemExit(f"flow run of conv-{index} ended {state.type}: {state.message}")

    with prefect_test_harness(server_startup_timeout=180):
        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(run, range(conversations)))
        return time.perf_counter() - started


ARMS = {"loop": loop_arm, "batch": batch_arm, "flow": flow_arm}


def check(uri: str, conversations: int, pairs: int) -> dict[str, Any]:
    """Return how every conversation is reflected in its pair's summary."""
    ctx = open_context(uri, account=ACCOUNT)
    expected: dict[tuple[str, str], list[str]] = {}
    for index in range(conversations):
        expected.setdefault(pair_of(index, pairs), []).append(f"conv-{index}")
    recorded_once = 0
    markers_in_text = 0
    duplicated_markers = 0
    bank = session.session_bank(ctx)
    for (user, agent), convs in expected.items():
        found = session.session_summary(ctx, user, agent)
        assert found is not None, (user, agent)
        counts = Counter(found.conversations)
        ids = found.covered_message_ids
        assert len(ids) == len(set(ids)) == 3 * len(convs), (user, agent, len(ids))
        assert ctx.store.count(bank.id, f"key = '{session.pair_key(user, agent)}'") >= 1
        recorded_once += sum(counts[c] == 1 for c in convs)
        assert set(counts) == set(convs)
        for conv in convs:
            seen = found.summary.count(marker(int(conv.removeprefix("conv-"))))
            markers_in_text += seen >= 1
            duplicated_markers += seen > 2  # a marker is in two turns of its conversation
    return {
        "recorded_exactly_once": recorded_once,
        "markers_in_summary_text": markers_in_text,
        "markers_duplicated": duplicated_markers,
    }


def main() -> None:
    """Build the conversations, run both arms on copies and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--conversations", type=int, default=40)
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--threads", type=int, default=4, help="merges at a time")
    parser.add_argument("--arms", default="loop,batch", help="of loop, batch, flow")
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: temp)")
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="membank-session-merge-"))
    try:
        source = str(folder / "source")
        started = time.perf_counter()
        build(source, args.conversations, args.pairs)
        print(f"wrote {args.conversations} conversations in {time.perf_counter() - started:.1f} s")
        results: dict[str, Any] = {
            "conversations": args.conversations,
            "pairs": args.pairs,
            "threads": args.threads,
        }
        arms = args.arms.split(",")
        for name in arms:
            uri = str(folder / name)
            shutil.copytree(source, uri)
            seconds = ARMS[name](uri, args.conversations, args.pairs, args.threads)
            figures = check(uri, args.conversations, args.pairs)
            rate = args.conversations / seconds
            print(f"{name}: {seconds:.1f} s, {rate:.1f} conversations/s, {figures}")
            results[name] = {"seconds": round(seconds, 2), "per_second": round(rate, 2), **figures}
        for name in arms[1:]:
            results[f"{name}_over_loop_seconds"] = round(
                results[name]["seconds"] / results["loop"]["seconds"], 2
            )
        if "batch" in results:
            results["batch_within_1_5x"] = results["batch_over_loop_seconds"] <= 1.5
        print(json.dumps(results))
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
