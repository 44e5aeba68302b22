"""Writers in other processes (spawn) while compaction and retention run: zero lost writes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from multiprocessing import get_context
from multiprocessing.pool import Pool
from typing import Any

import lancedb
import pytest
from compaction_support import MARKER, MarkerCompleter, make_bank, spawn_pool
from spawned import make_table_and_add, write_markers, write_recent

from memory import entries, retention
from memory.clock import FixedClock
from memory.compaction.apply import compact_partition
from memory.context import Context
from memory.models import EntryIn
from memory.store.lance import LanceStore
from memory.store.segments import StoreTuning

WRITERS = 2
PER_WRITER = 25


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    """Two spawned worker processes, shared by the tests of this module."""
    with spawn_pool(WRITERS) as workers:
        yield workers


@pytest.fixture(params=["default", "many-segments"])
def prune_by(request: pytest.FixtureRequest, ctx: Context) -> str:
    """How this process cuts its indices into segments (the writers keep the defaults):
    with many segments every write is indexed and segments of two rows are merged."""
    if request.param == "many-segments":
        tuning = StoreTuning(segment_rows=2, reindex_every=1, index_segments=2)
        ctx.store = LanceStore(ctx.store.uri, tuning=tuning)
    return str(request.param)


RACES = 12


def test_processes_racing_to_make_a_table_make_one_and_keep_both_rows(
    ctx: Context, pool: Pool
) -> None:
    """Every store table is made on first use; two first uses at once must not fail a write
    or drop a row (LanceDB commits a losing creation as an Overwrite of the winner's table)."""
    with get_context("spawn").Manager() as manager:
        for race in range(RACES):
            start = manager.Barrier(WRITERS)
            jobs = [(ctx.store.uri, f"raced{race}", start, w) for w in range(WRITERS)]
            assert sorted(pool.starmap(make_table_and_add, jobs)) == list(range(WRITERS))
            rows = (
                lancedb.connect(ctx.store.uri)
                .open_table(f"raced{race}")
                .to_arrow()["row"]
                .to_pylist()
            )
            assert sorted(rows) == list(range(WRITERS)), f"race {race} kept {rows}"


class _MadeElsewhereMeanwhile:
    """A LanceDB connection whose looks before its first creation find nothing, as when
    another machine makes the table between this process's look and its creation (object
    storage without a lease service, where the creation lock is per process)."""

    def __init__(self, uri: str) -> None:
        self.real = lancedb.connect(uri)
        self.creating = False

    def open_table(self, name: str) -> object:
        if not self.creating:
            raise ValueError(f"Table '{name}' was not found")
        return self.real.open_table(name)

    def create_table(self, name: str, **options: Any) -> object:
        self.creating = True
        return self.real.create_table(name, **options)


def test_a_table_made_elsewhere_between_the_look_and_the_creation_is_opened(
    tmp_path: object,
) -> None:
    import pyarrow as pa

    from memory.store.connection import Connection

    schema = pa.schema([("row", pa.int64())])
    uri = str(tmp_path)
    lancedb.connect(uri).create_table("made", schema=schema).add(pa.table({"row": [1]}))
    store = Connection(uri)
    store._connection = _MadeElsewhereMeanwhile(uri)

    table = store._small_table("made", schema, create=True)

    assert table is not None and table.to_arrow()["row"].to_pylist() == [1]


@pytest.mark.usefixtures("prune_by")
def test_compaction_while_other_processes_write(ctx: Context, pool: Pool) -> None:
    ctx.completer = MarkerCompleter
    bank = make_bank(ctx, max_turns=8)
    jobs = [(ctx.store.uri, ctx.account, bank.id, "k", w, PER_WRITER) for w in range(WRITERS)]
    pending = pool.starmap_async(write_markers, jobs)
    while not pending.ready():  # compact over and over while the others write
        compact_partition(ctx, bank, "k", wait=30)
    assert pending.get(timeout=300) == [PER_WRITER] * WRITERS
    compact_partition(ctx, bank, "k", wait=30)  # settle the last writes

    stored = entries.load(ctx, bank, "k")
    seen = Counter(m for e in stored for m in MARKER.findall(e.content))
    expected = {f"M{w}-{i}" for w in range(WRITERS) for i in range(PER_WRITER)}
    assert set(seen) == expected, f"lost writes: {sorted(expected - set(seen))}"
    assert all(count == 1 for count in seen.values()), f"kept and summarised: {seen}"
    assert [e.kind for e in stored].count("summary") == 1
    assert len(stored) <= 8


@pytest.mark.usefixtures("prune_by")
def test_retention_while_other_processes_write(ctx: Context, clock: FixedClock, pool: Pool) -> None:
    bank = make_bank(ctx, name="short", retention_days=30, compaction_prompt=None)
    old = clock.now() - timedelta(days=60)
    jobs = [(ctx.store.uri, ctx.account, bank.id, f"w{w}", PER_WRITER) for w in range(WRITERS)]
    pending = pool.starmap_async(write_recent, jobs)
    deleted = 0
    batch = 0
    while not pending.ready() or batch == 0:
        stale = [
            EntryIn(key="old", speaker="s", content=f"old {batch}-{i}", created_at=old)
            for i in range(10)
        ]
        entries.write(ctx, bank, stale)
        deleted += retention.apply_retention(ctx, bank).deleted
        batch += 1
    written = {i for ids in pending.get(timeout=300) for i in ids}
    stored = entries.read(ctx, bank)
    assert written <= {e.id for e in stored}, "a concurrent write was lost"
    assert all(e.created_at >= clock.now() - timedelta(days=30) for e in stored)
    assert deleted == 10 * batch
