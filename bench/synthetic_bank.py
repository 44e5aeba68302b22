"""Build a large synthetic conversation bank quickly, for the stats and export benchmarks.

Rows are generated with numpy and written straight into the bank's entries table in big
Arrow batches (with the store's derived `search_text`, no index maintenance), with a block
of precomputed random unit vectors reused across batches (embedding a million texts would
take hours and is not what these benchmarks measure).
"""

from __future__ import annotations

import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory import banks
from memory.clock import FixedClock
from memory.config import get_mode
from memory.context import Context
from memory.models import Bank, BankCreate
from memory.store.lance import LanceStore, with_search_text
from memory.store.schema import entries_schema
from memory.testing import HashingEmbedder

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
SPEAKERS = [f"speaker-{i}" for i in range(20)]
TAGS = [f"tag-{i}" for i in range(50)]
WORDS = ["order", "refund", "delivery", "grinder", "frother"]
WORDS += ["warranty", "invoice", "firmware", "repair", "address"]


def context(uri: str) -> Context:
    """Return a context on `uri` with a fixed clock (the data's 'now') and a cheap embedder."""
    return Context(
        store=LanceStore(uri),
        clock=FixedClock(NOW),
        embedder=lambda mode: HashingEmbedder(mode.dims),
    )


def build(
    ctx: Context, *, entries: int, keys: int, batch: int = 100_000, seed: int = 7
) -> tuple[Bank, float]:
    """Create bank `bench` with `entries` rows over `keys` keys; returns (bank, seconds)."""
    started = time.perf_counter()
    bank = banks.create(ctx, BankCreate(name="bench", type="conversation"))
    dims = get_mode(bank.mode).dims
    rng = np.random.default_rng(seed)
    block = rng.standard_normal((batch, dims), dtype=np.float32)
    block /= np.linalg.norm(block, axis=1, keepdims=True)
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(block.ravel()), dims)
    table = ctx.store.entries_table(bank.id)
    assert table is not None
    for start in range(0, entries, batch):
        count = min(batch, entries - start)
        rows = _rows(rng, start, count, keys, vectors.slice(0, count), dims)
        table.add(rows)
    return bank, time.perf_counter() - started


def _rows(
    rng: np.random.Generator, start: int, count: int, keys: int, vectors: pa.Array, dims: int
) -> pa.Table:
    ids = [uuid.UUID(int=start + i).hex for i in range(count)]
    key_ids = rng.integers(0, keys, count)
    words = rng.integers(0, len(WORDS), (count, 3))
    content = [
        f"turn {start + i} about {WORDS[a]} and {WORDS[b]}, {WORDS[c]} mentioned"
        for i, (a, b, c) in enumerate(words)
    ]
    tag_counts = rng.integers(0, 4, count)
    offsets = np.concatenate([[0], np.cumsum(tag_counts)]).astype(np.int32)
    tag_values = pa.array(np.array(TAGS)[rng.integers(0, len(TAGS), int(offsets[-1]))])
    ages = rng.uniform(0, 30 * 86_400, count)
    created = [NOW - timedelta(seconds=float(s)) for s in ages]
    empty_lists = pa.ListArray.from_arrays(
        pa.array(np.zeros(count + 1, np.int32)), pa.array([], pa.string())
    )
    columns = {
        "entry_id": pa.array(ids),
        "key": pa.array([f"conversation-{k}" for k in key_ids]),
        "speaker": pa.array(np.array(SPEAKERS)[rng.integers(0, len(SPEAKERS), count)]),
        "role": pa.array(np.where(rng.random(count) < 0.5, "user", "assistant")),
        "memory_type": pa.nulls(count, pa.string()),
        "kind": pa.array(["entry"] * count),
        "chunk_index": pa.array(np.zeros(count, np.int32)),
        "chunk_count": pa.array(np.ones(count, np.int32)),
        "text": pa.array(content),
        "content": pa.array(content),
        "tags": pa.ListArray.from_arrays(pa.array(offsets), tag_values),
        "metadata": pa.array(["{}"] * count),
        "attachments": pa.array(["[]"] * count),
        "summary_of": empty_lists,
        "created_at": pa.array(created, pa.timestamp("us", tz="UTC")),
        "seq": pa.array(np.arange(start, start + count, dtype=np.int64)),
        "token_count": pa.array(rng.integers(5, 200, count).astype(np.int32)),
        "vector": vectors,
    }
    return with_search_text(pa.Table.from_pydict(columns), entries_schema(dims))
