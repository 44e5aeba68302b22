"""Session-summary merging: the deployment's flow vs calling the merge function in a loop.

Usage: python bench/session_merge.py [--conversations 1000] [--pairs 100] [--threads 4] [--dir DIR]

Writes `--conversations` ended conversations (three turns each, one unique marker per
conversation) to working memory, spread round-robin over `--pairs` user x agent pairs,
then copies that store twice and merges every conversation into its pair's rolling summary:
- baseline: `memory.agents.session.merge_conversation` called in a loop;
- flow: `flows.session_merge.session_merge_flow`, the flow the `membank-session-merge/merge`
  deployment runs, called in-process once per conversation under a local Prefect test
  server (`prefect_test_harness`), `--threads` runs at a time (as a worker with that many
  slots would; merges of one user wait for each other's lock): every run is a real flow
  run with its task run and states recorded by the API; only the worker's process
  start-up (~8 s a run) is left out.
Both use the offline extractive summarizer and the MiniLM embedder (`open_context`). For
each arm it checks that every conversation is recorded in its pair's summary exactly once
(conversations and covered message ids, no duplicates, one summary per pair) and counts the
markers found in the summary text (the extractive summarizer keeps what fits its budget,
so a marker may be dropped, never duplicated). The last line of stdout is a JSON object.
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
    started = time.perf_counter()
    for index in range(conversations):
        user, agent = pair_of(index, pairs)
        session.merge_conversation(ctx, user=user, agent=agent, conversation=f"conv-{index}")
    return time.perf_counter() - started


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
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--threads", type=int, default=4, help="flow runs at a time")
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
            "flow_threads": args.threads,
        }
        for name, arm in (("loop", loop_arm), ("flow", flow_arm)):
            uri = str(folder / name)
            shutil.copytree(source, uri)
            seconds = arm(uri, args.conversations, args.pairs, args.threads)
            figures = check(uri, args.conversations, args.pairs)
            rate = args.conversations / seconds
            print(f"{name}: {seconds:.1f} s, {rate:.1f} conversations/s, {figures}")
            results[name] = {"seconds": round(seconds, 2), "per_second": round(rate, 2), **figures}
        results["flow_throughput_over_loop"] = round(
            results["flow"]["per_second"] / results["loop"]["per_second"], 2
        )
        print(json.dumps(results))
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
