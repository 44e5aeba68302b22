"""The LanceDB store on tmp_path: provisioning, indices, filters, pruning, several store handles."""

from __future__ import annotations

import fcntl
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lance
import pytest
from lance.optimize import Compaction
from lance_files import btree_keys, data_values, fts_segments, vocabulary_size

from memory import banks, entries, purge, search
from memory.config import get_mode
from memory.context import Context
from memory.errors import NotFound, StorageError
from memory.models import Bank, BankCreate, BankUpdate, Entry, EntryIn, SearchQuery
from memory.store import filters
from memory.store import segments as store_segments
from memory.store.lance import LanceStore, entries_table_name
from memory.store.retry import race_of
from memory.store.schema import ENTRY_COLUMNS
from memory.store.segments import StoreTuning
from memory.types.entry_filter import EntryFilter


@pytest.fixture
def gen(ctx: Context) -> Bank:
    """A general bank in the default mode."""
    return banks.create(ctx, BankCreate(name="gen", type="general"))


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _second_handle(ctx: Context) -> Context:
    """Another store on the same folder, as a second worker or CLI process would open it."""
    return Context(
        store=LanceStore(ctx.store.uri, tuning=ctx.store.tuning),
        account=ctx.account,
        clock=ctx.clock,
        embedder=ctx.embedder,
    )


def _tuned(ctx: Context, **values: Any) -> Context:
    """Return `ctx` on a store over the same folder with these tuning values."""
    ctx.store = LanceStore(ctx.store.uri, tuning=StoreTuning(**values))
    return ctx


def _table_dir(tmp_path: Path) -> Path:
    return next((tmp_path / "db").glob("entries_*.lance"))


def _row_address(ctx: Context, bank: Bank, entry: Entry) -> int:
    table = ctx.store.entries_table(bank.id)
    assert table is not None
    where = filters.equals("entry_id", entry.id)
    rows = table.to_lance().to_table(columns=[], filter=where, with_row_address=True)
    (address,) = rows.column("_rowaddr").to_pylist()
    return int(address)


def _live_fts(ctx: Context, bank: Bank) -> set[str]:
    """Return the uuids of the full-text segments the table's latest version uses."""
    table = ctx.store.entries_table(bank.id)
    assert table is not None
    return {s.uuid for s in store_segments.segments_of(table.to_lance(), "text_idx")}


def _fts_docs(tmp_path: Path) -> set[int]:
    return {row for segment in fts_segments(_table_dir(tmp_path)) for row in segment.row_ids}


# filters ---------------------------------------------------------------------------------


def test_literal_escapes_quotes_and_rejects_nul() -> None:
    assert filters.literal("x' OR '1'='1") == "'x'' OR ''1''=''1'"
    assert filters.equals("key", "it's") == "key = 'it''s'"
    assert filters.one_of("entry_id", []) == "false"
    assert filters.one_of("entry_id", ["a'", "b"]) == "entry_id IN ('a''', 'b')"
    with pytest.raises(ValueError, match="NUL"):
        filters.literal("a\x00b")


def test_entry_filter_and_conjoin() -> None:
    assert filters.entry_filter() is None
    assert filters.conjoin(None, "", None) is None
    assert filters.conjoin("a = 1", None, "b = 2") == "(a = 1) AND (b = 2)"
    where = filters.entry_filter(
        key="k'", tags=["t"], speaker="s", since=datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert where is not None
    assert "key = 'k'''" in where and "speaker = 's'" in where and "array_has_all" in where
    assert "2026-01-01T00:00:00" in where


# provisioning ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["fast", "balanced", "accurate"])
def test_bank_table_has_mode_dims_key_index_and_fts_index(ctx: Context, mode: str) -> None:
    bank = banks.create(ctx, BankCreate(name=mode, type="general", mode=mode))
    dims = get_mode(mode).dims
    table = ctx.store.entries_table(bank.id)
    assert table is not None
    assert table.schema.field("vector").type.list_size == dims
    indices = {index.name: index.index_type for index in table.list_indices()}
    assert indices.get("key_idx") == "BTree"
    assert indices.get("text_idx") == "FTS"


def test_unprovisioned_table_reads_empty(ctx: Context, gen: Bank) -> None:
    banks.reset_source(ctx, gen.id)
    assert not ctx.store.has_entries_table(gen.id)
    assert ctx.store.scan(gen.id).column_names == ENTRY_COLUMNS
    assert ctx.store.scan(gen.id).num_rows == 0
    assert ctx.store.count(gen.id) == 0
    assert ctx.store.version_count(gen.id) == 0
    assert list(ctx.store.scan_batches(gen.id)) == []
    ctx.store.delete_where(gen.id, "true")  # nothing to delete, no table created
    assert not ctx.store.has_entries_table(gen.id)


def test_put_bank_raw_replaces_by_id(ctx: Context, gen: Bank) -> None:
    ctx.store.put_bank(gen.model_copy(update={"description": "changed"}))
    rows = ctx.store.bank_rows(ctx.account)
    assert len(rows) == 1 and rows[0]["description"] == "changed"


# writes, reindexing, deletes ----------------------------------------------------------------


def test_rows_are_folded_into_the_indices_and_stay_searchable(ctx: Context, gen: Bank) -> None:
    ctx = _tuned(ctx, reindex_every=3)
    for i in range(4):
        entries.write(ctx, gen, [EntryIn(key=f"k{i % 2}", content=f"tulip bulb order {i}")])
    table = ctx.store.entries_table(gen.id)
    assert table is not None
    assert table.index_stats("key_idx").num_unindexed_rows < 3
    assert table.index_stats("text_idx").num_indexed_rows >= 3
    entries.write(ctx, gen, [EntryIn(key="k1", content="tulip bulb order late")])
    assert [e.content for e in entries.load(ctx, gen, "k1")] == [
        "tulip bulb order 1",
        "tulip bulb order 3",
        "tulip bulb order late",
    ]
    for method in ("hybrid", "vector", "fts"):
        hits = search.search(ctx, gen, SearchQuery(text="tulip late", key="k1", method=method))
        assert {h.entry.key for h in hits} == {"k1"}
        assert len(hits) == 3


def test_the_backlog_a_write_checks_is_what_lancedb_counts_unindexed(
    ctx: Context, gen: Bank
) -> None:
    """`needs_indexing` counts from the manifest the rows LanceDB's index_stats counts."""
    ctx = _tuned(ctx, reindex_every=10_000, loose_fragments=10_000)  # nothing is folded
    for i in range(5):
        entries.write(ctx, gen, [EntryIn(key=f"k{i}", content=f"note {n}") for n in range(i + 1)])
        if i == 2:
            ctx.store.maintain(gen.id)
        if i == 3:
            one = filters.conjoin(filters.equals("key", "k3"), filters.equals("text", "note 0"))
            ctx.store.delete_where(gen.id, one, prune=False)  # a deletion file, no prune
        table = ctx.store.entries_table(gen.id)
        pending = table.index_stats("key_idx").num_unindexed_rows
        for limit in (pending, pending + 1):
            tuning = StoreTuning(reindex_every=max(limit, 1), loose_fragments=10_000)
            due = store_segments.needs_indexing(table, tuning)
            assert due == (0 < pending >= limit), (i, pending, limit)


def test_each_indexed_write_gets_its_own_segment_until_small_ones_are_merged(
    ctx: Context, gen: Bank, tmp_path: Path
) -> None:
    ctx = _tuned(ctx, reindex_every=1, segment_rows=6, index_segments=3)
    table = None
    for w in range(2):
        entries.write(ctx, gen, [EntryIn(key=f"k{w}", content=f"pear{w} n{i}") for i in range(2)])
        table = ctx.store.entries_table(gen.id)
        segments = [s for s in store_segments.segments_of(table.to_lance()) if s.fragment_ids]
        assert [len(s.fragment_ids) for s in segments] == [1] * (w + 1)  # a delta per write
    entries.write(ctx, gen, [EntryIn(key="k2", content=f"pear2 n{i}") for i in range(2)])
    assert table is not None
    table.checkout_latest()
    # the third small segment: the three (6 rows) are merged, their fragments compacted
    segments = [s for s in store_segments.segments_of(table.to_lance()) if s.fragment_ids]
    assert len(segments) == 1
    assert len(table.to_lance().get_fragments()) == 1
    for w in range(3):
        hits = search.search(ctx, gen, SearchQuery(text=f"pear{w}", key=f"k{w}", method="fts"))
        assert len(hits) == 2


def test_a_big_write_is_indexed_in_bounded_segments(ctx: Context, gen: Bank) -> None:
    ctx = _tuned(ctx, segment_rows=4, reindex_every=1)
    entries.write(ctx, gen, [EntryIn(key="k", content=f"plum n{i}") for i in range(10)])
    table = ctx.store.entries_table(gen.id)
    assert table is not None
    rows = store_segments.fragment_rows(table.to_lance())
    sizes = [
        sum(rows[f] for f in s.fragment_ids) for s in store_segments.segments_of(table.to_lance())
    ]
    assert sorted(size for size in sizes if size) == [2, 4, 4]


def test_delete_where_prunes_old_versions(ctx: Context, gen: Bank, tmp_path: Path) -> None:
    a, b = entries.write(
        ctx, gen, [EntryIn(key="k", content="keepme"), EntryIn(key="k", content="zzdropme991")]
    )
    entries.write(ctx, gen, [EntryIn(key="k", content="another write")])
    assert ctx.store.version_count(gen.id) > 1
    purge.delete_final(ctx, gen, EntryFilter.of_ids([b.id]), prune_now=False)
    assert ctx.store.version_count(gen.id) > 1
    assert ctx.store.has_deleted_rows(gen.id)
    assert _files_containing(tmp_path / "db", b"zzdropme991")  # still in old versions
    ctx.store.prune(gen.id)
    assert ctx.store.version_count(gen.id) == 1
    assert ctx.store.old_version_count(gen.id) == 0
    assert not ctx.store.has_deleted_rows(gen.id)
    assert _files_containing(tmp_path / "db", b"zzdropme991") == []
    assert [e.id for e in entries.load(ctx, gen, "k")][:1] == [a.id]


def test_deleted_bank_record_leaves_no_copy_in_the_registry(ctx: Context, tmp_path: Path) -> None:
    marker = "zzregistrymarker4417"
    bank = banks.create(ctx, BankCreate(name="doomed", type="general", description=marker))
    banks.update(ctx, bank.id, BankUpdate(max_turns=3))
    assert _files_containing(tmp_path / "db" / "banks.lance", marker.encode())
    banks.delete(ctx, bank.id)
    assert _files_containing(tmp_path / "db", marker.encode()) == []


# several handles on one folder (CLI processes, workers) --------------------------------------


def test_second_handle_sees_writes_resets_and_reprovisioning(ctx: Context, gen: Bank) -> None:
    other = _second_handle(ctx)
    entries.write(ctx, gen, [EntryIn(key="k", content="one")])
    assert [e.content for e in entries.load(other, gen, "k")] == ["one"]  # caches its handle

    banks.reset_source(ctx, gen.id)
    assert entries.load(other, gen, "k") == []
    assert search.search(other, gen, SearchQuery(text="one")) == []

    entries.write(ctx, gen, [EntryIn(key="k", content="two")])
    assert [e.content for e in entries.load(other, gen, "k")] == ["two"]
    entries.write(other, gen, [EntryIn(key="k", content="three")])
    assert [e.content for e in entries.load(ctx, gen, "k")] == ["two", "three"]


def test_second_handle_sees_deleted_bank_as_gone(ctx: Context, gen: Bank) -> None:
    other = _second_handle(ctx)
    entries.write(ctx, gen, [EntryIn(key="k", content="one")])
    assert len(entries.load(other, gen, "k")) == 1
    banks.delete(ctx, gen.id)
    assert entries.load(other, gen, "k") == []
    assert banks.list_banks(other) == []


def test_a_read_that_loses_a_race_with_a_prune_reloads(ctx: Context, gen: Bank) -> None:
    entries.write(ctx, gen, [EntryIn(key="k", content=f"row {i}") for i in range(3)])
    other = _second_handle(ctx).store
    stale = other.entries_table(gen.id)
    assert stale is not None
    entries.write(ctx, gen, [EntryIn(key="k", content="gone soon")])
    doomed = [e.id for e in entries.load(ctx, gen, "k")]
    purge.delete_final(
        ctx, gen, EntryFilter.of_ids(doomed)
    )  # rewrites the files and drops old versions
    entries.write(ctx, gen, [EntryIn(key="k", content="after")])
    with pytest.raises((OSError, ValueError)) as lost:  # the stale version's files are gone
        stale.to_lance().to_table(columns=["content"])
    assert race_of(lost.value) == "gone"
    rows = other._on_latest(stale, lambda t: t.to_lance().to_table(columns=["content"]))
    assert rows.column("content").to_pylist() == ["after"]


def _shared_is_free(uri: str, table: str) -> bool:
    """Return True when the table's versions lock could be taken shared right now."""
    path = Path(uri) / "_locks" / f"{table}.versions.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_a_prune_waits_for_a_streaming_read(ctx: Context, gen: Bank) -> None:
    entries.write(ctx, gen, [EntryIn(key="k", content=f"row {i}") for i in range(6)])
    name = entries_table_name(gen.id)
    stream = ctx.store.scan_batches(gen.id, columns=["content"], batch_size=2)
    first = next(stream)
    assert _shared_is_free(ctx.store.uri, name)  # the stream holds the lock shared
    other = _second_handle(ctx)
    purge.delete_final(
        other,
        gen,
        EntryFilter.of_ids([e.id for e in entries.load(other, gen, "k")]),
        prune_now=False,
    )
    during: list[bool] = []
    drop = store_segments.drop_old_versions

    def observed(*args: Any, **kwargs: Any) -> None:
        during.append(_shared_is_free(ctx.store.uri, name))
        drop(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_segments, "drop_old_versions", observed)
        pruner = threading.Thread(target=other.store.prune, args=(gen.id,))
        pruner.start()
        rest = [row for batch in stream for row in batch.column("content").to_pylist()]
        pruner.join()
    # the cleanup ran holding the lock exclusively, so not while the stream held it shared,
    # and the stream read every row of its version
    assert during == [False]
    assert first.column("content").to_pylist() + rest == [f"row {i}" for i in range(6)]
    assert ctx.store.version_count(gen.id) == 1
    assert ctx.store.count(gen.id) == 0


# final deletion: data files, key index and full-text segments ------------------------------


def _indexed_notes_and(ctx: Context, gen: Bank, text: str) -> tuple[list[Entry], Entry]:
    """Write five `apple note` entries under key k and `text` under key x, all indexed."""
    notes = entries.write(ctx, gen, [EntryIn(key="k", content=f"apple note {i}") for i in range(5)])
    (other,) = entries.write(ctx, gen, [EntryIn(key="x", content=text)])
    ctx.store.maintain(gen.id)
    return notes, other


def _held(tmp_path: Path, marker: str, key: str) -> dict[str, bool]:
    """Where the table's files hold `marker` (data) and `key` (the BTree)."""
    table_dir = _table_dir(tmp_path)
    return {
        "bytes": bool(_files_containing(tmp_path / "db", marker.encode())),
        "data": any(marker in str(v) for v in data_values(table_dir, "search_text")),
        "btree": key in btree_keys(table_dir),
    }


def test_a_prune_leaves_no_deleted_key_token_or_text_in_any_file(
    ctx: Context, gen: Bank, tmp_path: Path
) -> None:
    kept, doomed = _indexed_notes_and(ctx, gen, "zzrebuildmarker quince")
    address = _row_address(ctx, gen, doomed)
    # positive controls: the files hold the row before the delete
    assert _held(tmp_path, "zzrebuildmarker", "x") == {"bytes": True, "data": True, "btree": True}
    assert address in _fts_docs(tmp_path)
    vocabulary = vocabulary_size(_table_dir(tmp_path), _live_fts(ctx, gen))

    purge.delete_final(ctx, gen, EntryFilter.of_ids([doomed.id]))

    assert _held(tmp_path, "zzrebuildmarker", "x") == {
        "bytes": False,
        "data": False,
        "btree": False,
    }
    live = {_row_address(ctx, gen, e) for e in kept}
    assert _fts_docs(tmp_path) == live  # no document of the deleted row
    # its two words (in no other row) left the vocabulary; every token left has a document
    assert vocabulary_size(_table_dir(tmp_path), _live_fts(ctx, gen)) == vocabulary - 2
    assert all(n > 0 for s in fts_segments(_table_dir(tmp_path)) for n in s.postings)
    table = ctx.store.entries_table(gen.id)
    assert {i.name: i.index_type for i in table.list_indices()} == {
        "key_idx": "BTree",
        "text_idx": "FTS",
    }
    assert table.index_stats("text_idx").num_indexed_rows == 5
    assert ctx.store.version_count(gen.id) == 1
    assert search.search(ctx, gen, SearchQuery(text="zzrebuildmarker quince", method="fts")) == []
    hits = search.search(ctx, gen, SearchQuery(text="apple note 3", key="k"))
    assert {h.entry.id for h in hits} == {e.id for e in kept}


def _filled_segments(table: Any) -> dict[str, frozenset[int]]:
    segments = store_segments.segments_of(table.to_lance())
    return {s.uuid: frozenset(s.fragment_ids) for s in segments if s.fragment_ids}


def test_a_prune_remaps_only_the_segments_of_the_fragments_it_touched(
    ctx: Context, gen: Bank, tmp_path: Path
) -> None:
    # each write indexed as its own segment and kept as its own fragment
    ctx = _tuned(ctx, reindex_every=1, index_segments=100)
    written = [
        entries.write(
            ctx, gen, [EntryIn(key=f"k{w}", content=f"plum{w} zzseg{w}x{i}") for i in range(4)]
        )
        for w in range(4)
    ]
    table = ctx.store.entries_table(gen.id)
    before = _filled_segments(table)
    doomed = written[1][2]
    assert doomed.id in {e.id for e in written[1]}
    assert "k1" in btree_keys(_table_dir(tmp_path))
    purge.delete_final(ctx, gen, EntryFilter.of_ids([doomed.id]))

    after = _filled_segments(table)
    assert len(set(before.items()) - set(after.items())) == 1  # write 1's segment only
    assert len(set(after.items()) - set(before.items())) == 1  # remapped onto its new fragment
    assert table.index_stats("text_idx").num_unindexed_rows == 0
    assert _files_containing(tmp_path / "db", b"zzseg1x2") == []
    assert search.search(ctx, gen, SearchQuery(text="zzseg1x2", method="fts")) == []
    for w, batch in enumerate(written):
        live = {e.id for e in batch} - {doomed.id}
        assert {e.id for e in entries.load(ctx, gen, f"k{w}")} == live
        hits = search.search(
            ctx, gen, SearchQuery(text=f"plum{w}", key=f"k{w}", method="fts", k=10)
        )
        assert {h.entry.id for h in hits} == live


def test_a_dropped_fragment_leaves_nothing_in_a_segment_that_covered_more(
    ctx: Context, gen: Bank, tmp_path: Path
) -> None:
    """LanceDB keeps a segment over a fragment whose rows were all deleted when the segment
    covers another fragment too (rows masked, still in its files): the prune rewrites it."""
    ctx = _tuned(ctx, reindex_every=10_000, loose_fragments=10_000)  # writes stay unindexed
    first = entries.write(
        ctx, gen, [EntryIn(key="zzdropkey", content=f"zzdropword {i}") for i in range(3)]
    )
    second = entries.write(
        ctx, gen, [EntryIn(key="kept", content=f"kept word {i}") for i in range(3)]
    )
    later = entries.write(ctx, gen, [EntryIn(key="later", content="later word")])
    table = ctx.store.entries_table(gen.id)
    assert table is not None
    # another process indexes the first two writes as one segment
    table.to_lance().optimize.optimize_indices(num_indices_to_merge=0)
    table.checkout_latest()
    assert "zzdropkey" in btree_keys(_table_dir(tmp_path))
    doomed = {_row_address(ctx, gen, e) for e in first}
    assert doomed <= _fts_docs(tmp_path)

    purge.delete_final(ctx, gen, EntryFilter.of_ids([e.id for e in first]), prune_now=False)
    # no fragment has a deletion file (the whole fragment went), yet a prune is due
    assert all(f.deletion_file() is None for f in table.to_lance().get_fragments())
    assert ctx.store.has_deleted_rows(gen.id)
    ctx.store.prune(gen.id)

    assert not ctx.store.has_deleted_rows(gen.id)
    assert "zzdropkey" not in btree_keys(_table_dir(tmp_path))
    assert not doomed & _fts_docs(tmp_path)
    assert _files_containing(tmp_path / "db", b"zzdropword") == []
    assert {e.id for e in entries.load(ctx, gen, "kept")} == {e.id for e in second}
    hits = search.search(ctx, gen, SearchQuery(text="word", method="fts", k=10))
    assert {h.entry.id for h in hits} == {e.id for e in second + later}


def test_an_emptied_table_keeps_its_indices_for_the_next_write(
    ctx: Context, gen: Bank, tmp_path: Path
) -> None:
    gone = entries.write(ctx, gen, [EntryIn(key="k", content=f"zzemptied {i}") for i in range(3)])
    ctx.store.maintain(gen.id)
    assert _files_containing(tmp_path / "db", b"zzemptied")
    purge.delete_final(ctx, gen, EntryFilter.of_ids([e.id for e in gone]))
    table = ctx.store.entries_table(gen.id)
    assert {i.name for i in table.list_indices()} == {"key_idx", "text_idx"}
    assert _files_containing(tmp_path / "db", b"zzemptied") == []
    assert _fts_docs(tmp_path) == set()
    new = entries.write(ctx, gen, [EntryIn(key="k", content="fresh quince")])
    ctx.store.maintain(gen.id)
    assert table.index_stats("text_idx").num_indexed_rows == 1
    hits = search.search(ctx, gen, SearchQuery(text="quince", key="k", method="fts"))
    assert [h.entry.id for h in hits] == [new[0].id]


def test_a_prune_removes_the_copy_a_rewrite_that_lost_a_race_left(
    ctx: Context, gen: Bank, tmp_path: Path
) -> None:
    """Another process's rewrite copied a row, then lost its commit to a delete of that row:
    Lance leaves the copy "for GC" (7 days); the next prune removes it."""
    first, secret = entries.write(
        ctx, gen, [EntryIn(key="k", content="first to go"), EntryIn(key="k", content="zzracedcopy")]
    )
    purge.delete_final(ctx, gen, EntryFilter.of_ids([first.id]), prune_now=False)
    dataset = lance.dataset(str(_table_dir(tmp_path)))
    options = {"materialize_deletions": True, "materialize_deletions_threshold": 0.0}
    plan = Compaction.plan(dataset, options)
    rewrites = [task.execute(dataset) for task in plan.tasks]  # the copy holds the secret
    purge.delete_final(
        ctx, gen, EntryFilter.of_ids([secret.id]), prune_now=False
    )  # committed first
    with pytest.raises(OSError) as lost:
        Compaction.commit(dataset, rewrites, options)
    assert race_of(lost.value) == "conflict"
    ctx.store.prune(gen.id)
    assert _files_containing(tmp_path / "db", b"zzracedcopy") == []
    assert entries.read(ctx, gen) == []


def test_a_prune_cut_before_its_cleanup_is_finished_by_the_next(
    ctx: Context, gen: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, doomed = _indexed_notes_and(ctx, gen, "zzcutmarker quince")

    def killed(*args: object, **kwargs: object) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(store_segments, "drop_old_versions", killed)
    with pytest.raises(StorageError, match="No space left"):
        purge.delete_final(ctx, gen, EntryFilter.of_ids([doomed.id]))
    assert not ctx.store.has_deleted_rows(gen.id)  # the rewrite committed
    assert ctx.store.old_version_count(gen.id) > 0
    assert _files_containing(tmp_path / "db", b"zzcutmarker")  # the old versions hold it
    assert search.search(ctx, gen, SearchQuery(text="zzcutmarker", method="fts")) == []
    monkeypatch.undo()
    ctx.store.prune(gen.id)
    assert ctx.store.version_count(gen.id) == 1
    assert _files_containing(tmp_path / "db", b"zzcutmarker") == []
    assert len(search.search(ctx, gen, SearchQuery(text="apple note", key="k", method="fts"))) == 5


def test_reads_of_a_missing_folder_find_nothing_and_create_nothing(
    ctx: Context, tmp_path: Path
) -> None:
    missing = tmp_path / "typo"
    other = Context(store=LanceStore(str(missing)), account="acme", clock=ctx.clock)
    assert banks.list_banks(other) == []
    with pytest.raises(NotFound, match="typo"):
        banks.get(other, "notes")
    assert not missing.exists()
    banks.create(other, BankCreate(name="notes", type="general"))
    assert [b.name for b in banks.list_banks(other)] == ["notes"]


@pytest.mark.parametrize("uri", ["file", "weird://x"])
def test_unusable_storage_is_a_storage_error(ctx: Context, tmp_path: Path, uri: str) -> None:
    if uri == "file":
        (tmp_path / "file").write_text("not a folder")
        uri = str(tmp_path / "file")
    other = Context(store=LanceStore(uri), account="acme", clock=ctx.clock)
    with pytest.raises(StorageError, match="--data"):
        banks.create(other, BankCreate(name="b", type="general"))
    with pytest.raises(StorageError, match="--data"):
        banks.list_banks(other)
