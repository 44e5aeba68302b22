"""A conversation write finds the turn it carries from what the store remembers of its own
last write (`memory.store.latest_turns`) exactly as a scan of the stored turns would."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memory import banks, entries
from memory.clock import FixedClock
from memory.context import Context
from memory.entries.delete import forget
from memory.models import Bank, BankCreate, EntryIn
from memory.store import neighbour_text
from memory.store.lance import LanceStore
from memory.store.segments import StoreTuning
from memory.testing import hashing_embedder


def _context(root: Path, clock: FixedClock, remembered: int) -> Context:
    store = LanceStore(str(root), tuning=StoreTuning(remembered_turns=remembered))
    return Context(store=store, account="acme", clock=clock, embedder=hashing_embedder)


def _documents(ctx: Context, bank: Bank) -> list[tuple[Any, ...]]:
    table = ctx.store.index_documents(bank.id)  # type: ignore[attr-defined]
    names = ["entry_id", "chunk_index", "search_text", "context_id"]
    return sorted(tuple(row[n] for n in names) for row in table.to_pylist())


def _turn(rng: random.Random, number: int, clock: FixedClock) -> EntryIn:
    back = rng.choice([None, None, None, 0, 1, 2, 5])  # mostly now, now and then backdated
    return EntryIn(
        id=f"turn-{number}",
        key=f"k{rng.randrange(4)}",
        speaker=rng.choice(["ann", "bob"]),
        content=f"turn {number} says {rng.choice(['hello', 'order', 'river', 'tips'])}",
        tags=[rng.choice(["a", "b"])],
        created_at=None if back is None else clock.now() - timedelta(hours=back),
    )


def test_remembered_turns_carry_what_a_scan_finds(tmp_path: Path, clock: FixedClock) -> None:
    """Writes (some backdated), forgets and another store's writes in between: the bank that
    remembers turns indexes every turn as the one that always scans."""
    sides = [_context(tmp_path / name, clock, n) for name, n in (("kept", 10_000), ("scan", 0))]
    made = [banks.create(ctx, BankCreate(name="conv", type="conversation")) for ctx in sides]
    others = [
        _context(tmp_path / name, clock, 10_000) for name in ("kept", "scan")
    ]  # a second store (another process) on each folder
    rng = random.Random(5)
    number = 0
    for step in range(30):
        action = rng.choice(["write", "write", "write", "forget", "other"])
        clock.advance(timedelta(minutes=1))
        if action == "forget" and number:
            victim = f"turn-{rng.randrange(number)}"
            for ctx, bank in zip(sides, made, strict=True):
                if any(e.id == victim for e in entries.read(ctx, bank)):
                    forget(ctx, bank, victim)
            continue
        batch = []
        for _ in range(rng.randint(1, 5)):
            batch.append(_turn(rng, number, clock))
            number += 1
        writers = others if action == "other" else sides
        for ctx, bank in zip(writers, made, strict=True):
            entries.write(ctx, bank, [item.model_copy(deep=True) for item in batch])
        assert _documents(sides[0], made[0]) == _documents(sides[1], made[1]), step


def test_a_write_to_keys_it_wrote_reads_no_stored_turns(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    bank = banks.create(ctx, BankCreate(name="conv", type="conversation"))
    first = entries.write(ctx, bank, [EntryIn(key="k", speaker="ann", content="first")])[0]
    scanned: list[list[str]] = []
    scan = neighbour_text._stored_timelines

    def spy(dataset: Any, keys: list[str]) -> Any:
        scanned.append(keys)
        return scan(dataset, keys)

    monkeypatch.setattr(neighbour_text, "_stored_timelines", spy)
    second = entries.write(ctx, bank, [EntryIn(key="k", speaker="bob", content="second")])[0]
    entries.write(ctx, bank, [EntryIn(key="k2", speaker="bob", content="elsewhere")])
    assert scanned == [[], ["k2"]]  # "k" was remembered; "k2" was never written here
    assert {row[0]: row[3] for row in _documents(ctx, bank)}[second.id] == first.id


def test_a_table_made_again_at_the_same_version_is_not_mistaken_for_the_old_one(
    tmp_path: Path, clock: FixedClock
) -> None:
    ctx = _context(tmp_path / "db", clock, 10_000)
    bank = banks.create(ctx, BankCreate(name="conv", type="conversation"))
    entries.write(ctx, bank, [EntryIn(key="k", speaker="ann", content="gone soon")])
    store = ctx.store
    assert isinstance(store, LanceStore)
    version = store.entries_table(bank.id).version
    other = _context(tmp_path / "db", clock, 10_000)  # another process resets the bank
    other_store = other.store
    assert isinstance(other_store, LanceStore)
    dims = store.vector_dims(bank.id)
    assert dims is not None
    other_store.drop_entries_table(bank.id)
    other_store.create_entries_table(bank.id, dims)
    while other_store.entries_table(bank.id).version < version:
        entries.write(other, bank, [EntryIn(key="x", speaker="bob", content="filler")])
    assert other_store.entries_table(bank.id).version == version
    written = entries.write(ctx, bank, [EntryIn(key="k", speaker="ann", content="after")])
    docs = {row[0]: row[3] for row in _documents(ctx, bank)}
    assert docs[written[0].id] is None  # the dropped turn is not carried
