"""The vector index: built by maintenance past a size, used by unfiltered searches only, and
covered by final deletion (no index file keeps a forgotten entry's vector)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from lance_files import btree_keys

from memory import banks, entries, search
from memory.context import Context
from memory.models import Bank, BankCreate, Entry, EntryIn, SearchQuery
from memory.ops import entries as entry_ops
from memory.ops.entries import ForgetRequest
from memory.store import vector_index
from memory.store.indices import ID_INDEX, VECTOR_INDEX, index_names
from memory.store.lance import LanceStore
from memory.store.segments import StoreTuning
from memory.types.entry_filter import EntryFilter

ROWS = 300
SLICE = 100


@pytest.fixture
def small(ctx: Context) -> Context:
    """`ctx` on a store that indexes vectors from 200 rows, appending 100 rows a fragment."""
    tuning = StoreTuning(vector_index_rows=200, segment_rows=SLICE, nprobes=4)
    ctx.store = LanceStore(ctx.store.uri, tuning=tuning)
    return ctx


def _bank(ctx: Context) -> tuple[Bank, list[Entry]]:
    bank = banks.create(ctx, BankCreate(name="big", type="general"))
    written = entries.write(
        ctx,
        bank,
        [EntryIn(key=f"k{i % 3}", content=f"parcel {i} left at gate {i * 7}") for i in range(ROWS)],
    )
    return bank, written


def _table_dir(tmp_path: Path) -> Path:
    return next((tmp_path / "db").glob("entries_*.lance"))


def _vector_of(ctx: Context, bank: Bank, entry: Entry) -> np.ndarray:
    found = ctx.store.scan(bank.id, columns=["vector"], where=f"entry_id = '{entry.id}'")
    return np.asarray(found.column("vector")[0].as_py(), np.float32)


def _files_holding(root: Path, vector: np.ndarray) -> list[str]:
    """Return the files under `root` holding the vector's float32 bytes, as stored or as
    the cosine index stores it (normalised)."""
    needles = {vector.tobytes(), (vector / np.linalg.norm(vector)).astype(np.float32).tobytes()}
    return [
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and any(n in p.read_bytes() for n in needles)
    ]


def test_maintenance_builds_the_index_past_the_threshold_and_not_before(small: Context) -> None:
    bank, _ = _bank(small)
    table = small.store.entries_table(bank.id)
    assert VECTOR_INDEX not in index_names(table)  # writes never build it
    small.store.maintain(bank.id)
    assert {VECTOR_INDEX, ID_INDEX} <= index_names(table)
    assert vector_index.built_partitions(table) == vector_index.partitions_for(ROWS)
    assert vector_index.due(table, 200) is None  # not grown four times yet: no rebuild
    other = banks.create(small, BankCreate(name="small", type="general"))
    entries.write(small, other, [EntryIn(key="k", content="one")])
    small.store.maintain(other.id)
    assert not {VECTOR_INDEX, ID_INDEX} & index_names(small.store.entries_table(other.id))


def test_filtered_search_is_exact_and_whole_bank_search_finds_its_entry(small: Context) -> None:
    bank, written = _bank(small)
    queries = [
        SearchQuery(text="parcel 17 left at gate 119", key="k2", method="vector", k=5),
        SearchQuery(text="parcel 17 gate", key="k2", k=5),
        SearchQuery(text="parcel 250 left at gate 1750", method="vector", k=3, tags=[]),
    ]
    unindexed = LanceStore(small.store.uri, tuning=StoreTuning(segment_rows=SLICE))
    unindexed.maintain(bank.id)  # every other index folded in, no vector index (too small)
    assert VECTOR_INDEX not in index_names(small.store.entries_table(bank.id))
    before = [search.search(small, bank, q) for q in queries]
    small.store.maintain(bank.id)
    assert VECTOR_INDEX in index_names(small.store.entries_table(bank.id))
    after = [search.search(small, bank, q) for q in queries]
    for old, new in zip(before[:2], after[:2], strict=True):
        assert [(h.entry.id, h.score) for h in new] == [(h.entry.id, h.score) for h in old]
    assert after[2][0].entry.id == written[250].id  # through the index: its own text first
    newer = entries.write(small, bank, [EntryIn(key="k9", content="crate of lemons at dock")])
    query = SearchQuery(text="crate of lemons at dock", method="vector", k=1)
    found = search.search(small, bank, query)
    assert found[0].entry.id == newer[0].id  # a row not folded into the index yet is searched


def test_a_forgotten_entry_leaves_its_vector_in_no_file(small: Context, tmp_path: Path) -> None:
    bank, written = _bank(small)
    small.store.maintain(bank.id)
    folder = _table_dir(tmp_path)
    victim = _vector_of(small, bank, written[5])
    assert any("_indices" in f for f in _files_holding(folder, victim))  # the index holds it
    entry_ops.forget(small, ForgetRequest(bank=bank.id, entry_id=written[5].id))
    assert _files_holding(folder, victim) == []


def test_a_deleted_fragment_leaves_its_vectors_in_no_index_segment(
    small: Context, tmp_path: Path
) -> None:
    """A whole fragment deleted under a segment that covers others leaves that segment
    stale (LanceDB keeps it): the final deletion rewrites it."""
    bank, written = _bank(small)
    small.store.maintain(bank.id)
    folder = _table_dir(tmp_path)
    middle = written[SLICE : 2 * SLICE]  # the second of three fragments
    victims = [_vector_of(small, bank, e) for e in middle[:5]]
    receipt = small.store.delete_final(
        bank.id, EntryFilter(ids=tuple(e.id for e in middle)), account=small.account
    )
    assert receipt.pruned
    assert [f for v in victims for f in _files_holding(folder, v)] == []
    assert not {e.id for e in middle} & set(btree_keys(folder))  # nor the id index their ids
    assert small.store.deletion_audit(bank.id).final
    found = search.search(small, bank, SearchQuery(text=middle[0].content, method="vector", k=1))
    assert found[0].entry.id != middle[0].id


def test_membank_maintain_builds_the_index(small: Context) -> None:
    """`membank maintain` (`verify.maintain_bank`) is where a bank gets its vector index."""
    from memory import verify

    bank, _ = _bank(small)
    health = verify.maintain_bank(small, bank)
    assert health.error is None
    assert VECTOR_INDEX in index_names(small.store.entries_table(bank.id))
