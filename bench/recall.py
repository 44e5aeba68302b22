"""Long-term recall latency: `longterm.recall` vs a raw LanceDB filtered vector search.

Builds one long-term bank of USERS x PER_USER memories (default 10,000 x 100 = 1M rows) in
bulk through the store (`LanceStore.add_rows`, the path every write takes, with the store's
key and full-text indices), with precomputed random unit vectors so set-up is not spent
embedding. Half of each user's memories are user-wide, half belong to one of three agents.
Then it times, alternating in the same minutes, one user's query:

- membank: `longterm.recall(ctx, user=U, query=Q, k=10)` (bank lookup, query embedding with
  the hashing embedder, the prefiltered vector search, rows into records), with and without
  an agent (the agent adds the visibility filter);
- raw: `table.search(v).distance_type("cosine").where(<same filter>, prefilter=True)
  .limit(10)` on the same table, the query embedded the same way, the same columns.

Usage: python bench/recall.py [--users N] [--per-user N] [--queries N] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime

import numpy as np
import pyarrow as pa

from memory.agents import longterm
from memory.context import Context
from memory.providers.embed import HashingEmbedder
from memory.store import filters
from memory.store.lance import LanceStore
from memory.store.schema import ENTRY_COLUMNS
from memory.testing import hashing_embedder

AGENTS = ("agent-1", "agent-2", "agent-3")
TOPICS = ("tea", "coffee", "python", "rust", "hiking", "chess", "jazz", "paris", "dogs", "cats")


def _batch(users: range, per_user: int, dims: int, rng: np.random.Generator, seq: int) -> pa.Table:
    """Return the chunk rows of the memories of `users` (one chunk each)."""
    n = len(users) * per_user
    keys = [f"user-{u:05d}" for u in users for _ in range(per_user)]
    index = [i for _ in users for i in range(per_user)]
    agents = [AGENTS[i % 3] if i % 2 else None for i in index]
    tags = [
        [TOPICS[i % 10], longterm.USER_WIDE if a is None else longterm.agent_tag(a)]
        for i, a in zip(index, agents, strict=True)
    ]
    texts = [
        f"{k} memory {i}: likes {TOPICS[i % 10]} and {TOPICS[(i * 7) % 10]}"
        for k, i in zip(keys, index, strict=True)
    ]
    vectors = rng.standard_normal((n, dims), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    now = datetime.now(UTC)
    columns = {
        "entry_id": [f"{seq + j:032x}" for j in range(n)],
        "key": keys,
        "speaker": pa.nulls(n, pa.string()),
        "role": pa.nulls(n, pa.string()),
        "memory_type": ["preference" if i % 3 else "fact" for i in index],
        "kind": ["entry"] * n,
        "chunk_index": pa.array(np.zeros(n, np.int32)),
        "chunk_count": pa.array(np.ones(n, np.int32)),
        "text": texts,
        "content": texts,
        "tags": tags,
        "metadata": [
            json.dumps({"agent": a, "scope": "user" if a is None else "agent"}) for a in agents
        ],
        "attachments": ["[]"] * n,
        "summary_of": pa.array([[]] * n, pa.list_(pa.string())),
        "created_at": pa.array([now] * n, pa.timestamp("us", tz="UTC")),
        "seq": pa.array(np.arange(seq, seq + n, dtype=np.int64)),
        "token_count": pa.array(np.full(n, 12, np.int32)),
    }
    table = pa.table(columns)
    return table.append_column(
        "vector", pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), dims)
    )


def build(ctx: Context, users: int, per_user: int) -> tuple[str, float]:
    """Fill the long-term bank; returns its id and the seconds the set-up took."""
    bank = longterm.memory_bank(ctx, create=True)
    assert bank is not None
    dims = 384
    rng = np.random.default_rng(7)
    start = time.perf_counter()
    step = max(1, 100_000 // per_user)
    for first in range(0, users, step):
        part = range(first, min(first + step, users))
        ctx.store.add_rows(bank.id, _batch(part, per_user, dims, rng, first * per_user))
    ctx.store.maintain(bank.id)
    return bank.id, time.perf_counter() - start


def _percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def main() -> None:
    """Build the bank, time both searches alternately, print the figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--per-user", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data", help="storage folder (default: a temporary one)")
    args = parser.parse_args()
    data = args.data or tempfile.mkdtemp(prefix="membank-recall-")
    store = LanceStore(data)
    ctx = Context(store=store, account="bench", embedder=hashing_embedder)
    bank_id, seconds = build(ctx, args.users, args.per_user)
    rows = store.count(bank_id)
    print(f"built {rows:,} rows ({args.users:,} users x {args.per_user}) in {seconds:.1f} s")
    table = store.entries_table(bank_id)
    embedder = HashingEmbedder(384)
    rng = np.random.default_rng(11)
    columns = [*ENTRY_COLUMNS, "_distance"]

    def raw(user: str, agent: str | None, query: str) -> int:
        vector = embedder.embed([query])[0]
        where = filters.where_of(longterm.visible(user, agent)) or ""
        search = table.search(vector, query_type="vector").distance_type("cosine")
        result = search.where(where, prefilter=True).select(columns).limit(10).to_arrow()
        return int(result.num_rows)

    def ours(user: str, agent: str | None, query: str) -> int:
        return len(longterm.recall(ctx, user=user, agent=agent, query=query, k=10))

    for agent in (None, "agent-1"):
        times: dict[str, list[float]] = {"membank": [], "raw": []}
        for n in range(args.queries + 10):
            user = f"user-{int(rng.integers(args.users)):05d}"
            query = f"does {user} like {TOPICS[n % 10]}?"
            order = [("membank", ours), ("raw", raw)]
            if n % 2:
                order.reverse()
            found = {}
            for name, call in order:
                start = time.perf_counter()
                found[name] = call(user, agent, query)
                if n >= 10:  # the first ten warm the caches
                    times[name].append(time.perf_counter() - start)
            assert found["membank"] == found["raw"] == 10, found
        (ours_p50, ours_p95), (raw_p50, raw_p95) = (
            _percentiles(times["membank"]),
            _percentiles(times["raw"]),
        )
        label = "no agent (the user's view)" if agent is None else f"agent {agent}"
        print(
            f"{label}: membank recall p50 {ours_p50:.1f} ms p95 {ours_p95:.1f} ms | raw "
            f"p50 {raw_p50:.1f} ms p95 {raw_p95:.1f} ms | ratio p50 {ours_p50 / raw_p50:.2f}x "
            f"p95 {ours_p95 / raw_p95:.2f}x"
        )


if __name__ == "__main__":
    main()
