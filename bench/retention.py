"""Retention and a one-entry forget over 1,000,000 entries: membank vs the same final deletion
done by hand with LanceDB's public API, on identical tables.

Usage: python bench/retention.py [--entries 1000000] [--expired 0.33] [--dir DIR] [--neighbours]
       [--layout random|conversations] [--within-hours 6|inf]

Two identical tables are built the way a bank grows: entries appended in time order (one
Arrow batch per 100,000 entries, appended by the store in slices of one index segment),
random unit vectors (384 dims), then maintained by the store. A third of the entries are
older than the retention.
- membank: `memory.retention.apply_retention` (count, one delete commit, prune: the deleted
  text, keys, tokens and vectors are gone from every file and version);
- baseline, on the other copy: the same public-API final deletion by hand, `table.delete(p)`,
  `compact_files(materialize_deletions=True, materialize_deletions_threshold=0.0,
  target_rows_per_fragment=65536)`, `cleanup_old_versions(older_than=0,
  delete_unverified=True)`;
- then one-entry forgets on each copy (5 entries, alternating which side goes first,
  medians): `memory.entries.forget` vs the same three steps by hand with `entry_id = X`.
With `--neighbours` every row carries the turn before it in its key (`search_text`,
`context_id`) as conversation turns do since issue 14, so membank also takes the deleted
turns out of the rows after them; the by-hand side does the same rewrite with the same
public calls (a scan for the carriers, one `table.update`) before its three steps.
A row carries the turn before it only when that is at most `--within-hours` earlier (the
store's rule, `Settings.neighbour_within_hours`, default 6; `inf`: always, as before gap24).
`--layout` places the turns: `random` (default) on 100,000 random keys, one turn every
SPAN/entries, so a key's next turn comes days later at a random time; `conversations`:
conversations of 10 turns a few minutes apart, starting at random times through SPAN, each
on a key of its own.
With `--neighbours` a third copy without carried text gets the same retention by membank
(issue 24's must-show: carried text costs a deletion at most 1.5x). Target: membank at most
1.1x the by-hand baseline, for each. The last line of stdout is a JSON object: `ratio` is
membank over by hand, or with `--neighbours` membank with carried text over without.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory import banks, retention
from memory import entries as entry_mod
from memory.clock import FixedClock
from memory.config import get_mode
from memory.context import Context
from memory.models import Bank, BankCreate
from memory.settings import Settings
from memory.store import filters
from memory.store.filters import where_of
from memory.store.lance import LanceStore
from memory.store.schema import CONTEXT_COLUMN, CONTEXT_SEPARATOR
from memory.testing import HashingEmbedder

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
SPAN = timedelta(days=30)
BATCH = 100_000
FORGETS = 5
LAYOUTS = ("random", "conversations")
TURNS = 10
"""Turns of a conversation in the `conversations` layout."""


def context(uri: str) -> Context:
    """Return a context on `uri` whose clock is the data's 'now'."""
    return Context(
        store=LanceStore(uri), clock=FixedClock(NOW), embedder=lambda m: HashingEmbedder(m.dims)
    )


def build(
    ctx: Context,
    entries: int,
    retention_days: int,
    seed: int = 11,
    *,
    neighbours: bool = False,
    layout: str = "random",
    within: timedelta | None = None,
) -> Bank:
    """Create bank `bench` with `entries` entries appended oldest first over SPAN, placed
    by `layout` (each carrying the turn before it in its key when that is at most `within`
    earlier, as conversation turns do, with `neighbours`)."""
    bank = banks.create(
        ctx, BankCreate(name="bench", type="conversation", retention_days=retention_days)
    )
    dims = get_mode(bank.mode).dims
    rng = np.random.default_rng(seed)
    block = rng.standard_normal((BATCH, dims), dtype=np.float32)
    block /= np.linalg.norm(block, axis=1, keepdims=True)
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(block.ravel()), dims)
    step = SPAN / entries
    placed = _conversations(entries, seed) if layout == "conversations" else None
    last: dict[str, tuple[int, datetime]] | None = {} if neighbours else None
    for start in range(0, entries, BATCH):
        count = min(BATCH, entries - start)
        if placed is None:
            created = [NOW - SPAN + step * (start + i) for i in range(count)]
            keys = None
        else:
            created, keys = placed[0][start : start + count], placed[1][start : start + count]
        rows = _rows(rng, start, created, vectors.slice(0, count), keys)
        ctx.store.add_rows(bank.id, rows if last is None else _carrying(rows, start, last, within))
    ctx.store.maintain(bank.id)
    return bank


def _conversations(entries: int, seed: int) -> tuple[list[datetime], list[str]]:
    """Return the times and keys of `entries` turns, oldest first: conversations of TURNS
    turns 30 s to 5 min apart, each starting at a random time in SPAN, on a key of its own."""
    rng = np.random.default_rng(seed + 1)
    count = -(-entries // TURNS)
    span = SPAN.total_seconds() - TURNS * 300
    starts = rng.uniform(0, span, count)
    offsets = np.cumsum(rng.uniform(30, 300, (count, TURNS)), axis=1)
    seconds = (starts[:, None] + offsets).ravel()[:entries]
    order = np.argsort(seconds, kind="stable")
    micros = (seconds[order] * 1e6).astype(np.int64)
    first = NOW - SPAN
    created = [first + timedelta(microseconds=int(m)) for m in micros]
    keys = [f"conversation-{n // TURNS}" for n in order.tolist()]
    return created, keys


def _rows(
    rng: np.random.Generator,
    start: int,
    created: list[datetime],
    vectors: pa.Array,
    keys: list[str] | None = None,
) -> pa.Table:
    count = len(created)
    drawn = [f"conversation-{k}" for k in rng.integers(0, 100_000, count)]  # as before
    text = [_text(start + i) for i in range(count)]
    empty = pa.ListArray.from_arrays(
        pa.array(np.zeros(count + 1, np.int32)), pa.array([], pa.string())
    )
    return pa.table(
        {
            "entry_id": [uuid.UUID(int=start + i).hex for i in range(count)],
            "key": drawn if keys is None else keys,
            "speaker": ["ana"] * count,
            "role": ["user"] * count,
            "memory_type": pa.nulls(count, pa.string()),
            "kind": ["entry"] * count,
            "chunk_index": np.zeros(count, np.int32),
            "chunk_count": np.ones(count, np.int32),
            "text": text,
            "content": text,
            "tags": empty,
            "metadata": ["{}"] * count,
            "attachments": ["[]"] * count,
            "summary_of": empty,
            "created_at": pa.array(created, pa.timestamp("us", tz="UTC")),
            "seq": np.arange(start, start + count, dtype=np.int64),
            "token_count": rng.integers(5, 200, count).astype(np.int32),
            "vector": vectors,
        }
    )


def _text(number: int) -> str:
    """Return the text of entry `number`."""
    return f"turn {number} about an order"


def _carrying(
    rows: pa.Table,
    start: int,
    last: dict[str, tuple[int, datetime]],
    within: timedelta | None = None,
) -> pa.Table:
    """Return `rows` with the writer's neighbour columns: `search_text` carrying the text of
    the previous row of the same key when it is at most `within` earlier (None: always),
    `context_id` naming it (`last`: key -> row number and time)."""
    texts, ids, carried_at = [], [], []
    created = rows.column("created_at").to_pylist()
    for offset, (key, text) in enumerate(
        zip(rows.column("key").to_pylist(), rows.column("text").to_pylist(), strict=True)
    ):
        before = last.get(key)
        last[key] = (start + offset, created[offset])
        own = f"ana: {text}"
        if before is None or (within is not None and created[offset] - before[1] > within):
            texts.append(own)
            ids.append(None)
            carried_at.append(None)
        else:
            texts.append(f"{own}{CONTEXT_SEPARATOR}{_text(before[0])}")
            ids.append(uuid.UUID(int=before[0]).hex)
            carried_at.append(before[1])
    rows = rows.append_column("search_text", pa.array(texts, pa.string()))
    rows = rows.append_column(CONTEXT_COLUMN, pa.array(ids, pa.string()))
    # the carried turn's own columns, as the store's writer adds them (memory.store.carried)
    rows = rows.append_column("carried_speaker", pa.array(["ana"] * len(ids), pa.string()))
    rows = rows.append_column("carried_tags", pa.array([[] for _ in ids], pa.list_(pa.string())))
    return rows.append_column(
        "carried_created_at", pa.array(carried_at, pa.timestamp("us", tz="UTC"))
    )


def by_hand(table: Any, predicate: str, neighbours: bool = False) -> float:
    """Return the seconds LanceDB's public API takes to delete `predicate` for good (with
    `neighbours`, first rewriting the rows that carry a deleted turn, with the same SQL)."""
    started = time.perf_counter()
    if neighbours:
        _rewrite_carriers_by_hand(table, predicate)
    table.delete(predicate)
    table.to_lance().optimize.compact_files(
        materialize_deletions=True,
        materialize_deletions_threshold=0.0,
        target_rows_per_fragment=65_536,
    )
    table.checkout_latest()
    table.to_lance().cleanup_old_versions(older_than=timedelta(0), delete_unverified=True)
    table.checkout_latest()
    return time.perf_counter() - started


def _rewrite_carriers_by_hand(table: Any, predicate: str) -> None:
    """Null the carried turn of every row outside `predicate` that carries one inside it."""
    lance = table.to_lance()
    doomed = pc.unique(lance.to_table(columns=["entry_id"], filter=predicate).column(0))
    rows = lance.to_table(columns=["entry_id", CONTEXT_COLUMN], filter="context_id IS NOT NULL")
    rows = rows.filter(pc.is_in(rows.column(CONTEXT_COLUMN), doomed))
    carriers = pc.unique(rows.column("entry_id")).to_pylist()
    carriers = sorted(set(carriers).difference(doomed.to_pylist()))
    if carriers:
        table.update(
            where=f"{filters.one_of('entry_id', carriers)} AND context_id IS NOT NULL",
            values_sql={
                "search_text": "split_part(search_text, chr(30), 1)",
                CONTEXT_COLUMN: "CAST(NULL AS STRING)",
            },
        )
    table.checkout_latest()


def run(
    folder: Path,
    entries: int,
    expired: float,
    neighbours: bool = False,
    layout: str = "random",
    within: timedelta | None = None,
) -> dict[str, object]:
    """Return the benchmark's figures, building both copies under `folder`."""
    days = round(SPAN.days * (1 - expired))
    ctx_a, ctx_b = context(str(folder / "a")), context(str(folder / "b"))
    started = time.perf_counter()
    bank_a = build(ctx_a, entries, days, neighbours=neighbours, layout=layout, within=within)
    bank_b = build(ctx_b, entries, days, neighbours=neighbours, layout=layout, within=within)
    print(f"built 2 x {entries:,} entries in {time.perf_counter() - started:.1f} s")
    side = ctx_a.store.carried_table(bank_a.id)  # type: ignore[attr-defined]
    carried_rows = 0 if side is None else side.count_rows()
    predicate = where_of(retention.plan_retention(bank_b, NOW).entry_filter())
    assert predicate is not None

    started = time.perf_counter()
    result = retention.apply_retention(ctx_a, bank_a)
    membank_seconds = time.perf_counter() - started
    table = ctx_b.store.entries_table(bank_b.id)
    hand_seconds = by_hand(table, predicate, neighbours)
    remaining = ctx_a.store.count(bank_a.id)
    assert remaining == ctx_b.store.count(bank_b.id) == entries - result.deleted
    assert ctx_a.store.count(bank_a.id, predicate) == 0
    assert ctx_a.store.version_count(bank_a.id) == 1 == len(table.list_versions())

    # one-entry forgets: FORGETS different entries, alternating which side goes first
    victims = ctx_a.store.scan(bank_a.id, columns=["entry_id"]).column("entry_id")
    mine: list[float] = []
    hand: list[float] = []
    for n in range(FORGETS):
        victim = victims[n * 997 % len(victims)].as_py()

        def membank_forget(entry_id: str = victim) -> None:
            started = time.perf_counter()
            entry_mod.forget(ctx_a, bank_a, entry_id)
            mine.append(time.perf_counter() - started)

        def hand_forget(entry_id: str = victim) -> None:
            hand.append(by_hand(table, filters.equals("entry_id", entry_id), neighbours))

        for side in (membank_forget, hand_forget) if n % 2 == 0 else (hand_forget, membank_forget):
            side()
    assert ctx_a.store.count(bank_a.id) == ctx_b.store.count(bank_b.id)
    forget_seconds, forget_hand = statistics.median(mine), statistics.median(hand)

    ratio, forget_ratio = membank_seconds / hand_seconds, forget_seconds / forget_hand
    plain_seconds = None
    if neighbours:  # the same retention on a bank whose rows carry nothing
        ctx_c = context(str(folder / "c"))
        bank_c = build(ctx_c, entries, days, neighbours=False, layout=layout)
        started = time.perf_counter()
        plain = retention.apply_retention(ctx_c, bank_c)
        plain_seconds = time.perf_counter() - started
        assert plain.deleted == result.deleted
        print(
            f"membank retention on the same bank without carried text: {plain_seconds:.3f} s; "
            f"with carried text {membank_seconds / plain_seconds:.2f}x (target <= 1.5x)"
        )
    print(f"membank retention: {result.deleted:,} deleted in {membank_seconds:.3f} s (final)")
    print(f"by hand (delete + compact_files + cleanup_old_versions): {hand_seconds:.3f} s")
    print(f"ratio {ratio:.2f}x (target <= 1.1x)")
    print(
        f"one-entry forget on ~{remaining:,} entries (median of {FORGETS}, alternating order):"
        f" membank {forget_seconds:.3f} s, by hand {forget_hand:.3f} s,"
        f" ratio {forget_ratio:.2f}x (target <= 1.1x)"
    )
    over_plain = None if plain_seconds is None else membank_seconds / plain_seconds
    return {
        "entries": entries,
        "neighbours": neighbours,
        "layout": layout,
        "within_hours": None if within is None else within / timedelta(hours=1),
        "carried_rows": carried_rows,
        "deleted": result.deleted,
        "membank_seconds": round(membank_seconds, 3),
        "by_hand_seconds": round(hand_seconds, 3),
        "by_hand_ratio": round(ratio, 2),
        "plain_seconds": None if plain_seconds is None else round(plain_seconds, 3),
        "ratio": round(ratio if over_plain is None else over_plain, 2),
        "forget_seconds": round(forget_seconds, 3),
        "forget_by_hand_seconds": round(forget_hand, 3),
        "forget_ratio": round(forget_ratio, 2),
        "target_met": ratio <= 1.1 and forget_ratio <= 1.1,
    }


def main() -> None:
    """Build, time and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--expired", type=float, default=0.33, help="share older than retention")
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: temp)")
    parser.add_argument(
        "--neighbours",
        action="store_true",
        help="rows carry the turn before them (as conversation turns do since issue 14); "
        "both sides rewrite the carriers of deleted turns",
    )
    parser.add_argument("--layout", choices=LAYOUTS, default="random", help="see above")
    parser.add_argument(
        "--within-hours",
        type=float,
        default=Settings().neighbour_within_hours,
        help="a row carries the turn before it only this close (inf: always)",
    )
    args = parser.parse_args()
    within = None if math.isinf(args.within_hours) else timedelta(hours=args.within_hours)
    folder = args.dir or Path(tempfile.mkdtemp(prefix="membank-retention-"))
    try:
        figures = run(folder, args.entries, args.expired, args.neighbours, args.layout, within)
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
