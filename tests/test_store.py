"""The LanceDB store on tmp_path: provisioning, indices, filters, pruning, several store handles."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lance
import pytest

import memory.store.indices as store_indices
import memory.store.lance as lance_store
import memory.store.segments as store_segments
from memory import banks, entries, purge, search
from memory.config import get_mode
from memory.context import Context
from memory.errors import NotFound, StorageError
from memory.models import Bank, BankCreate, BankUpdate, Entry, EntryIn, SearchQuery
from memory.store import LanceStore, filters, rewrite
from memory.store.schema import ENTRY_COLUMNS


@pytest.fixture
def gen(ctx: Context) -> Bank:
    """A general bank in the default mode."""
    return banks.create(ctx, BankCreate(name="gen", type="general"))


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _second_handle(ctx: Context) -> Context:
    """Another store on the same folder, as a second worker or CLI process would open it."""
    return Context(
        store=LanceStore(ctx.store.uri), account=ctx.account, clock=ctx.clock, embedder=ctx.embedder
    )


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
    table = ctx.store.entries_table(bank.id, dims, create=False)
    assert table is not None
    assert table.schema.field("vector").type.list_size == dims
    indices = {index.name: index.index_type for index in table.list_indices()}
    assert indices.get("key_idx") == "BTree"
    assert indices.get("text_idx") == "FTS"


def test_unprovisioned_table_reads_empty(ctx: Context, gen: Bank) -> None:
    dims = get_mode(gen.mode).dims
    banks.reset_source(ctx, gen.id)
    assert not ctx.store.has_entries_table(gen.id)
    assert ctx.store.scan(gen.id, dims).column_names == ENTRY_COLUMNS
    assert ctx.store.scan(gen.id, dims).num_rows == 0
    assert ctx.store.count(gen.id, dims) == 0
    assert ctx.store.version_count(gen.id, dims) == 0
    assert list(ctx.store.scan_batches(gen.id, dims)) == []
    ctx.store.delete_where(gen.id, dims, "true")  # nothing to delete, no table created
    assert not ctx.store.has_entries_table(gen.id)


def test_put_bank_raw_replaces_by_id(ctx: Context, gen: Bank) -> None:
    ctx.store.put_bank(gen.model_copy(update={"description": "changed"}))
    rows = ctx.store.bank_rows(ctx.account)
    assert len(rows) == 1 and rows[0]["description"] == "changed"


# writes, reindexing, deletes ----------------------------------------------------------------


def test_rows_are_folded_into_the_indices_and_stay_searchable(
    ctx: Context, gen: Bank, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_indices, "REINDEX_EVERY", 3)
    dims = get_mode(gen.mode).dims
    for i in range(4):
        entries.write(ctx, gen, [EntryIn(key=f"k{i % 2}", content=f"tulip bulb order {i}")])
    table = ctx.store.entries_table(gen.id, dims)
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


def test_delete_where_prunes_old_versions(ctx: Context, gen: Bank, tmp_path: Path) -> None:
    dims = get_mode(gen.mode).dims
    a, b = entries.write(
        ctx, gen, [EntryIn(key="k", content="keepme"), EntryIn(key="k", content="zzdropme991")]
    )
    entries.write(ctx, gen, [EntryIn(key="k", content="another write")])
    assert ctx.store.version_count(gen.id, dims) > 1
    purge.delete_for_good(ctx, gen, filters.one_of("entry_id", [b.id]), prune_now=False)
    assert ctx.store.version_count(gen.id, dims) > 1
    assert _files_containing(tmp_path / "db", b"zzdropme991")  # still in old versions
    ctx.store.prune(gen.id, dims)
    assert ctx.store.version_count(gen.id, dims) == 1
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
    dims = get_mode(gen.mode).dims
    entries.write(ctx, gen, [EntryIn(key="k", content=f"row {i}") for i in range(3)])
    stale = _second_handle(ctx).store.entries_table(gen.id, dims)
    assert stale is not None
    entries.write(ctx, gen, [EntryIn(key="k", content="gone soon")])
    doomed = [e.id for e in entries.load(ctx, gen, "k")]
    purge.delete_for_good(
        ctx, gen, filters.one_of("entry_id", doomed)
    )  # rewrites the files and drops old versions
    entries.write(ctx, gen, [EntryIn(key="k", content="after")])
    with pytest.raises((OSError, ValueError)):  # the stale version's files are gone
        stale.to_lance().to_table(columns=["content"])
    rows = lance_store._on_latest(stale, lambda t: t.to_lance().to_table(columns=["content"]))
    assert rows.column("content").to_pylist() == ["after"]


def test_a_prune_waits_for_a_streaming_read(ctx: Context, gen: Bank) -> None:
    dims = get_mode(gen.mode).dims
    entries.write(ctx, gen, [EntryIn(key="k", content=f"row {i}") for i in range(6)])
    stream = ctx.store.scan_batches(gen.id, dims, columns=["content"], batch_size=2)
    first = next(stream)  # the stream holds the table's versions lock (shared) from here
    other = _second_handle(ctx)
    doomed = [e.id for e in entries.load(other, gen, "k")]
    purge.delete_for_good(other, gen, filters.one_of("entry_id", doomed), prune_now=False)
    pruner = threading.Thread(target=other.store.prune, args=(gen.id, dims))
    pruner.start()
    lock = (
        Path(ctx.store.uri) / "_locks" / f"{lance_store.entries_table_name(gen.id)}.versions.lock"
    )
    # no timing assumption: a prune that ignores the lock finishes, one that honours it waits
    deadline = time.monotonic() + 120  # only bounds a hang; never reached when either happens
    while pruner.is_alive() and not _blocked_on(lock) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pruner.is_alive() and _blocked_on(lock)  # waiting for the stream to finish
    rest = [row for batch in stream for row in batch.column("content").to_pylist()]
    assert first.column("content").to_pylist() + rest == [f"row {i}" for i in range(6)]
    pruner.join()
    assert ctx.store.version_count(gen.id, dims) == 1
    assert ctx.store.count(gen.id, dims) == 0


def _blocked_on(lock: Path) -> bool:
    """Return whether some process or thread waits for an flock on `lock` (/proc/locks ->)."""
    if not lock.exists():
        return False
    inode = f":{lock.stat().st_ino} "
    return any("->" in line and inode in line for line in Path("/proc/locks").open())


def _indexed_notes_and(ctx: Context, gen: Bank, text: str) -> tuple[list[Entry], Entry]:
    """Write five `apple note` entries under key k and `text` under key x, all indexed."""
    notes = entries.write(ctx, gen, [EntryIn(key="k", content=f"apple note {i}") for i in range(5)])
    (other,) = entries.write(ctx, gen, [EntryIn(key="x", content=text)])
    ctx.store.maintain(gen.id, get_mode(gen.mode).dims)
    return notes, other


def test_a_prune_rebuilds_its_indices_without_deleted_words(
    ctx: Context, gen: Bank, tmp_path: Path
) -> None:
    dims = get_mode(gen.mode).dims
    kept, doomed = _indexed_notes_and(ctx, gen, "zzrebuildmarker quince")
    purge.delete_for_good(ctx, gen, filters.one_of("entry_id", [doomed.id]))
    table = ctx.store.entries_table(gen.id, dims, create=False)
    assert not store_indices.remap_pending(table)
    assert {i.name: i.index_type for i in table.list_indices()} == {
        "key_idx": "BTree",
        "text_idx": "FTS",
    }
    assert table.index_stats("text_idx").num_indexed_rows == 5
    assert _files_containing(tmp_path / "db", b"zzrebuildmarker") == []
    assert search.search(ctx, gen, SearchQuery(text="zzrebuildmarker quince", method="fts")) == []
    hits = search.search(ctx, gen, SearchQuery(text="apple note 3", key="k"))
    assert {h.entry.id for h in hits} == {e.id for e in kept}


def _segment_ids(table: Any, name: str) -> dict[str, frozenset[int]]:
    return {
        index["uuid"]: frozenset(index["fragment_ids"])
        for index in table.to_lance().list_indices()
        if index["name"] == name
    }


def test_a_prune_rebuilds_only_the_segments_of_the_fragments_it_touched(
    ctx: Context, gen: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lance_store, "FRAGMENT_ROWS", 4)  # each write keeps its fragment
    monkeypatch.setattr(store_segments, "SEGMENT_ROWS", 8)  # two writes per segment
    monkeypatch.setattr(store_segments, "SMALL_SEGMENT_ROWS", 1)
    dims = get_mode(gen.mode).dims
    written = [
        entries.write(
            ctx, gen, [EntryIn(key=f"k{w}", content=f"plum{w} zzseg{w}x{i}") for i in range(4)]
        )
        for w in range(4)
    ]
    ctx.store.maintain(gen.id, dims)
    table = ctx.store.entries_table(gen.id, dims, create=False)
    before = {name: _segment_ids(table, name) for name in ("key_idx", "text_idx")}
    assert [sorted(map(len, ids.values())) for ids in before.values()] == [[2, 2], [2, 2]]
    params = table.to_lance().stats.index_stats("text_idx")["segments"][0]["params"]
    doomed = written[1][2]
    purge.delete_for_good(ctx, gen, filters.one_of("entry_id", [doomed.id]))

    table = ctx.store.entries_table(gen.id, dims, create=False)
    for name in ("key_idx", "text_idx"):
        after = _segment_ids(table, name)
        touched = [u for u, frags in before[name].items() if u not in after]
        assert len(touched) == 1  # the segment of writes 0 and 1; that of 2 and 3 stays
        assert set(before[name].items()) - set(after.items()) == {
            (touched[0], before[name][touched[0]])
        }
    assert not store_indices.remap_pending(table)
    assert table.index_stats("text_idx").num_unindexed_rows == 0
    stats = table.to_lance().stats.index_stats("text_idx")
    assert all(segment["params"] == params for segment in stats["segments"])
    assert _files_containing(tmp_path / "db", b"zzseg1x2") == []
    assert search.search(ctx, gen, SearchQuery(text="zzseg1x2", method="fts")) == []
    for w, batch in enumerate(written):
        live = {e.id for e in batch} - {doomed.id}
        assert {e.id for e in entries.load(ctx, gen, f"k{w}")} == live
        hits = search.search(
            ctx, gen, SearchQuery(text=f"plum{w}", key=f"k{w}", method="fts", k=10)
        )
        assert {h.entry.id for h in hits} == live
        hits = search.search(ctx, gen, SearchQuery(text=f"zzseg{w}x3", method="fts"))
        assert [h.entry.content for h in hits] == [f"plum{w} zzseg{w}x3"]


def test_an_emptied_table_keeps_its_indices_for_the_next_write(
    ctx: Context, gen: Bank, tmp_path: Path
) -> None:
    dims = get_mode(gen.mode).dims
    gone = entries.write(ctx, gen, [EntryIn(key="k", content=f"zzemptied {i}") for i in range(3)])
    ctx.store.maintain(gen.id, dims)
    purge.delete_for_good(ctx, gen, filters.one_of("entry_id", [e.id for e in gone]))
    table = ctx.store.entries_table(gen.id, dims, create=False)
    assert {i.name for i in table.list_indices()} == {"key_idx", "text_idx"}
    assert _files_containing(tmp_path / "db", b"zzemptied") == []
    new = entries.write(ctx, gen, [EntryIn(key="k", content="fresh quince")])
    ctx.store.maintain(gen.id, dims)
    assert table.index_stats("text_idx").num_indexed_rows == 1
    hits = search.search(ctx, gen, SearchQuery(text="quince", key="k", method="fts"))
    assert [h.entry.id for h in hits] == [new[0].id]


def test_a_segment_swap_that_fails_deletes_the_segments_it_built(
    ctx: Context, gen: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_indices, "DEFER_REMAP_ROWS", 1)  # the deferred-remap path
    dims = get_mode(gen.mode).dims
    _, doomed = _indexed_notes_and(ctx, gen, "zzswapmarker quince")
    purge.delete_for_good(ctx, gen, filters.one_of("entry_id", [doomed.id]), prune_now=False)
    folder = next((tmp_path / "db").glob("entries_*.lance")) / "_indices"
    before = {p.name for p in folder.iterdir()}

    def refused(*args: object, **kwargs: object) -> None:
        raise RuntimeError("commit refused")

    monkeypatch.setattr(lance.LanceDataset, "commit", refused)
    with pytest.raises(StorageError, match="commit refused"):
        ctx.store.prune(gen.id, dims)
    added = {p.name for p in folder.iterdir()} - before
    assert [p for name in added for p in (folder / name).rglob("*") if p.is_file()] == []
    monkeypatch.undo()
    ctx.store.prune(gen.id, dims)
    assert _files_containing(tmp_path / "db", b"zzswapmarker") == []
    assert len(search.search(ctx, gen, SearchQuery(text="apple note", key="k", method="fts"))) == 5


def test_a_prune_keeps_the_remap_record_another_process_rewrote_into(
    ctx: Context, gen: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_indices, "DEFER_REMAP_ROWS", 1)  # the deferred-remap path
    monkeypatch.setattr(lance_store, "FRAGMENT_ROWS", 4)  # each write keeps its fragment
    monkeypatch.setattr(store_segments, "SEGMENT_ROWS", 4)  # one segment per write
    dims = get_mode(gen.mode).dims
    written = [
        entries.write(ctx, gen, [EntryIn(key=f"k{w}", content=f"fig{w} n{i}") for i in range(4)])
        for w in range(3)
    ]
    ctx.store.maintain(gen.id, dims)
    gone = [written[0][1].id, written[2][1].id]
    purge.delete_for_good(ctx, gen, filters.one_of("entry_id", gone), prune_now=False)
    table = ctx.store.entries_table(gen.id, dims, create=False)
    build = store_segments._build
    others: list[int] = []

    def racing_build(dataset: Any, spec: Any, fragments: list[int]) -> Any:
        if not others:  # another process rewrites write 2's fragment while this one rebuilds
            others.append(1)
            options = {"materialize_deletions": True, "materialize_deletions_threshold": 0.0}
            rewrite.compact(lance.dataset(dataset.uri), {**options, "defer_index_remap": True})
        return build(dataset, spec, fragments)

    monkeypatch.setattr(store_segments, "_build", racing_build)
    # this process's prune: its own rewrite (write 0's fragment) first, so the other's comes
    # after it listed the indices
    first = ctx.store._rewrite
    monkeypatch.setattr(
        ctx.store,
        "_rewrite",
        lambda t, options: first(t, {**options, "max_source_fragments": 1}),
    )
    ctx.store.prune(gen.id, dims)
    monkeypatch.undo()

    assert store_indices.remap_pending(table)  # the other process's mapping is still needed
    for w, batch in enumerate(written):  # loads go through the key index
        assert {e.id for e in entries.load(ctx, gen, f"k{w}")} == {e.id for e in batch} - set(gone)
    ctx.store.prune(gen.id, dims)  # the next prune finishes it
    assert not store_indices.remap_pending(table)
    for w, batch in enumerate(written):
        assert {e.id for e in entries.load(ctx, gen, f"k{w}")} == {e.id for e in batch} - set(gone)


def test_an_interrupted_index_rebuild_is_finished_by_the_next_prune(
    ctx: Context, gen: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_indices, "DEFER_REMAP_ROWS", 1)  # the deferred-remap path
    dims = get_mode(gen.mode).dims
    _, doomed = _indexed_notes_and(ctx, gen, "zzrebuildmarker quince")

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("killed during the index rebuild")

    rebuild = store_segments.rebuild
    monkeypatch.setattr(store_segments, "rebuild", crash)
    with pytest.raises(StorageError, match="killed during the index rebuild"):
        purge.delete_for_good(ctx, gen, filters.one_of("entry_id", [doomed.id]))
    table = ctx.store.entries_table(gen.id, dims, create=False)
    assert store_indices.remap_pending(table)
    # reads stay right meanwhile: the deleted row is gone, the others are found by key and text
    assert search.search(ctx, gen, SearchQuery(text="zzrebuildmarker quince", method="fts")) == []
    assert len(search.search(ctx, gen, SearchQuery(text="apple note", key="k", method="fts"))) == 5
    monkeypatch.setattr(store_segments, "rebuild", rebuild)
    ctx.store.prune(gen.id, dims)
    assert not store_indices.remap_pending(table)
    assert ctx.store.version_count(gen.id, dims) == 1
    assert _files_containing(tmp_path / "db", b"zzrebuildmarker") == []
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
