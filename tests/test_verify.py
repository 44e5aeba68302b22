"""`membank verify` and `membank maintain`: deleted data left on disk, counters off, exit codes;
and a full disk during a prune leaves the deletion pending until a later run finishes it."""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from datetime import timedelta
from pathlib import Path

import pytest
from compaction_support import make_bank

from memory import banks, entries, purge, verify
from memory.cli import main
from memory.context import Context
from memory.errors import NotFound
from memory.models import Bank, EntryIn
from memory.store import filters
from memory.store.lance import LanceStore
from memory.store.schema import entries_schema
from memory.store.segments import StoreTuning
from memory.testing import hashing_embedder
from memory.types.entry_filter import EntryFilter


@pytest.fixture(autouse=True)
def _local_account(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("MEMBANK_URI", "MEMBANK_ACCOUNT"):
        monkeypatch.delenv(name, raising=False)
    yield


def _cli(data: str, *args: str) -> tuple[int, str, str]:
    """Run membank on `data` in this process; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([*args, "--data", data])
        except SystemExit as exc:  # argparse errors
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _said(text: str) -> EntryIn:
    return EntryIn(key="k", speaker="alice", content=text)


def _with_secret(ctx: Context, name: str, needle: str, *, one_commit: bool = False) -> Bank:
    """Return a bank holding three entries, the middle one with `needle` in it."""
    bank = make_bank(ctx, name, compaction_prompt=None)
    items = [_said("first note"), _said(f"my card number is {needle}"), _said("last note")]
    if one_commit:  # one fragment: deleting one row leaves a deletion file
        entries.write(ctx, bank, items)
    else:
        for item in items:
            entries.write(ctx, bank, [item])
    return bank


def _secret_id(ctx: Context, bank: Bank, needle: str) -> str:
    (entry,) = [e for e in entries.read(ctx, bank) if needle in e.content]
    return entry.id


def _delete_unpruned(ctx: Context, bank: Bank, needle: str) -> None:
    """Delete the secret entry in one commit and leave its prune undone (as a crash would)."""
    where = EntryFilter.entry(_secret_id(ctx, bank, needle))
    purge.delete_final(ctx, bank, where, prune_now=False)


def test_a_clean_bank_verifies_with_exit_0(local: Context, data: str) -> None:
    bank = _with_secret(local, "chat", "qxcleanneedle")
    code, out, err = _cli(data, "verify", "chat")
    assert (code, err) == (0, "")
    assert "chat" in out and "clean" in out
    code, out, _ = _cli(data, "verify", "--all", "--json")
    (row,) = json.loads(out)
    assert code == 0 and row["clean"] is True and row["bank_id"] == bank.id
    assert row["old_versions"] > 0  # writes keep old versions: that alone is not a problem
    assert (row["deleted_rows"], row["stale_versions"], row["problems"]) == (0, 0, [])


@pytest.mark.parametrize("one_commit", [False, True], ids=["own-fragment", "shared-fragment"])
def test_verify_finds_an_unpruned_deletion_and_maintain_finishes_it(
    local: Context, data: str, one_commit: bool
) -> None:
    needle = "qxverifyneedle"
    bank = _with_secret(local, "chat", needle, one_commit=one_commit)
    _delete_unpruned(local, bank, needle)
    assert _files_containing(Path(data), needle.encode())  # positive control

    code, out, err = _cli(data, "verify", "chat", "--json")
    (row,) = json.loads(out)
    assert code == 1 and row["clean"] is False
    assert row["stale_versions"] > 0
    assert (row["deleted_rows"] > 0) is one_commit  # a whole fragment goes from the manifest
    assert "old table versions hold deleted rows" in err and "membank maintain" in err

    code, out, err = _cli(data, "maintain", "chat")
    assert (code, err) == (0, "")
    assert "yes" in out  # pruned
    assert _files_containing(Path(data), needle.encode()) == []
    assert _cli(data, "verify", "chat")[0] == 0
    assert [e.content for e in entries.read(local, bank)] == ["first note", "last note"]


def test_verify_finds_wrong_counters_and_maintain_repairs_them(local: Context, data: str) -> None:
    bank = _with_secret(local, "chat", "qxcountneedle")
    banks.save(local, banks.get(local, bank.id).model_copy(update={"summary_count": 5}))
    code, out, err = _cli(data, "verify", "chat", "--json")
    (row,) = json.loads(out)
    assert code == 1 and "summary_count is 5" in err
    assert row["problems"] == ["summary_count is 5, the bank holds 0"]
    assert (row["stored"]["summary_count"], row["derived"]["summary_count"]) == (5, 0)

    code, out, _ = _cli(data, "maintain", "chat", "--json")
    (done,) = json.loads(out)
    assert code == 0 and done["clean"] and done["repaired"] == row["problems"]
    assert banks.get(local, bank.id).summary_count == 0
    assert _cli(data, "verify", "chat")[0] == 0


def test_all_banks_are_checked_and_one_bad_bank_fails_the_run(local: Context, data: str) -> None:
    needle = "qxallneedle"
    _with_secret(local, "clean", "qxotherneedle")
    dirty = _with_secret(local, "dirty", needle)
    _delete_unpruned(local, dirty, needle)
    code, out, err = _cli(data, "verify", "--all")
    assert code == 1
    assert "clean" in out and "dirty" in out and "'dirty'" in err and "'clean'" not in err
    assert _cli(data, "maintain", "--all")[0] == 0
    assert _cli(data, "verify", "--all")[0] == 0


def test_a_run_over_every_bank_reports_progress_per_bank(local: Context) -> None:
    """Issue 25: `maintain --all` over many banks said nothing until the end."""
    from memory.ops import maintenance

    for name in ("a", "b", "c"):
        make_bank(local, name)
    every = maintenance.MaintenanceRequest(bank=None)
    for action in (maintenance.verify, maintenance.maintain):
        seen: list[tuple[int, int]] = []
        results = action(local, every, lambda *step, into=seen: into.append(step))
        assert sorted(r.bank_name for r in results) == ["a", "b", "c"]
        assert seen == [(1, 3), (1, 3), (1, 3)]


@pytest.mark.parametrize("command", ["maintain", "verify"])
def test_bad_targets_are_exit_2_and_a_missing_bank_exit_3(
    local: Context, data: str, command: str
) -> None:
    make_bank(local, "chat")
    code, _, err = _cli(data, command)
    assert code == 2 and "one of the arguments BANK --all is required" in err
    code, _, err = _cli(data, command, "chat", "--all")
    assert code == 2 and "not allowed with argument BANK" in err
    code, out, err = _cli(data, command, "nope")
    assert (code, out) == (3, "")
    assert "no bank 'nope'" in err


# a full disk during the prune -------------------------------------------------------------


class _FullDisk:
    """Makes the store's prune fail as a full disk does, until `free` is called."""

    def __init__(self, ctx: Context) -> None:
        self._store = ctx.store
        self._prune = ctx.store.prune
        ctx.store.prune = self  # type: ignore[method-assign]
        self.calls = 0

    def __call__(self, bank_id: str) -> None:
        self.calls += 1
        raise OSError(errno.ENOSPC, "No space left on device")

    def free(self) -> None:
        self._store.prune = self._prune  # type: ignore[method-assign]


def test_a_full_disk_during_a_forget_leaves_it_pending_and_forget_again_finishes_it(
    local: Context, data: str
) -> None:
    needle = "qxfulldiskneedle"
    bank = _with_secret(local, "chat", needle, one_commit=True)
    gone = _secret_id(local, bank, needle)
    disk = _FullDisk(local)

    with pytest.raises(purge.PrunePending, match=r"No space left on device.*membank maintain chat"):
        entries.forget(local, bank, gone)
    assert disk.calls == 1
    assert [e.content for e in entries.read(local, bank)] == ["first note", "last note"]
    assert _files_containing(Path(data), needle.encode())  # still on disk: the prune failed
    assert purge.pending_deletions(local, bank)
    with pytest.raises(purge.PrunePending):  # still full: forget again says so, not "not found"
        entries.forget(local, bank, gone)
    assert not verify.verify_bank(local, bank).clean

    disk.free()
    with pytest.raises(NotFound, match="finished now, so nothing deleted is left on disk"):
        entries.forget(local, bank, gone)
    assert _files_containing(Path(data), needle.encode()) == []
    assert verify.verify_bank(local, bank).clean


@pytest.mark.parametrize("later", ["write", "retention", "compaction"])
def test_a_later_run_finishes_a_prune_a_full_disk_stopped(
    local: Context, data: str, later: str
) -> None:
    from memory import retention
    from memory.compaction.bank import compact_bank

    needle = f"qx{later}needle"
    bank = _with_secret(local, "chat", needle)
    disk = _FullDisk(local)
    with pytest.raises(purge.PrunePending):
        entries.forget(local, bank, _secret_id(local, bank, needle))
    disk.free()
    assert _files_containing(Path(data), needle.encode())

    if later == "write":
        entries.write(local, bank, [_said("a later note")])
    elif later == "retention":
        assert retention.apply_retention(local, bank).finished_pending
    else:
        compact_bank(local, bank)

    assert _files_containing(Path(data), needle.encode()) == []
    assert verify.verify_bank(local, bank).clean


def test_a_real_full_disk_stops_the_prune_and_a_later_run_finishes_it(tmp_path: Path) -> None:
    """The same on a small tmpfs filled up: LanceDB's own ENOSPC, not an injected one."""
    from memory.store.lance import LanceStore
    from memory.testing import HashingEmbedder

    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(small)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        _full_tmpfs(small, LanceStore, HashingEmbedder)
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


def _full_tmpfs(small: Path, store_class: type, embedder_class: type) -> None:
    data = small / "db"
    ctx = Context(store=store_class(str(data)), embedder=lambda m: embedder_class(m.dims))
    needle = "qxtmpfsneedle"
    bank = make_bank(ctx, "chat", compaction_prompt=None)
    noise = [_said(f"note {i} {os.urandom(3000).hex()}") for i in range(20)]
    entries.write(ctx, bank, noise)
    bank = _with_secret(ctx, "secrets", needle, one_commit=True)
    assert _files_containing(data, needle.encode())  # positive control
    filler = small / "filler"
    with filler.open("wb", buffering=0) as out:  # fill the disk, then give back a little room
        try:
            while True:
                out.write(b"\0" * 4096)
        except OSError:
            pass
    with filler.open(
        "r+b"
    ) as out:  # room for the mark, the neighbour's rewrite and the delete, not the prune
        out.truncate(max(filler.stat().st_size - 48 * 1024, 0))

    with pytest.raises(purge.PrunePending, match="disk full: free space") as pending:
        entries.forget(ctx, bank, _secret_id(ctx, bank, needle))
    assert "No space left on device" in str(pending.value)
    assert ".rs:" not in str(pending.value)  # no engine source paths
    assert [e.content for e in entries.read(ctx, bank)] == ["first note", "last note"]
    assert _files_containing(data, needle.encode())
    assert purge.pending_deletions(ctx, bank)

    filler.unlink()
    assert verify.maintain_bank(ctx, bank).pruned
    assert _files_containing(data, needle.encode()) == []
    assert verify.verify_bank(ctx, bank).clean


def test_verify_reports_index_segments_that_still_hold_a_deleted_fragment(
    tmp_path: Path,
) -> None:
    """A delete that removes a whole fragment under a segment covering other fragments too
    leaves its keys and words in that segment, with no deletion file: once the old versions
    and the mark are gone, only the segment tells, and verify says so."""
    data = str(tmp_path / "db")
    unindexed = StoreTuning(reindex_every=10_000, loose_fragments=10_000)
    ctx = Context(store=LanceStore(data, tuning=unindexed), embedder=hashing_embedder)
    needle = "qxsegmentneedle"
    bank = _with_secret(ctx, "chat", needle)  # three writes, three fragments, none indexed
    table = ctx.store.entries_table(bank.id)
    assert table is not None
    # another process indexes the three writes as one segment
    table.to_lance().optimize.optimize_indices(num_indices_to_merge=0)
    _delete_unpruned(ctx, bank, needle)  # drops the secret's fragment from the manifest
    table.checkout_latest()
    table.to_lance().cleanup_old_versions(older_than=timedelta(0))  # versions: gone
    side = ctx.store.carried_table(bank.id)  # and those of the carried text's table
    side.to_lance().cleanup_old_versions(older_than=timedelta(0))
    ctx.store.mark_deletion(bank.id, pending=False)  # and no mark left to tell

    code, out, err = _cli(data, "verify", "chat", "--json")
    (row,) = json.loads(out)
    assert code == 1 and row["clean"] is False
    assert (row["deleted_rows"], row["stale_versions"]) == (0, 0)
    assert row["stale_segments"] > 0
    assert "index segments still hold keys and words of deleted rows" in err

    assert _cli(data, "maintain", "chat")[0] == 0
    assert _cli(data, "verify", "chat")[0] == 0


def test_verify_reports_duplicate_entry_ids_and_maintain_keeps_one_copy(
    local: Context, data: str
) -> None:
    bank = _with_secret(local, "chat", "qxdupneedle")
    stored = {e.id: e.content for e in entries.read(local, bank)}
    twice = sorted(stored)[:2]
    # the old concurrent-ingest bug: the same rows appended again, past the ingest id check
    all_columns = [f.name for f in entries_schema(1)]
    rows = local.store.scan(bank.id, columns=all_columns, where=filters.one_of("entry_id", twice))
    local.store.add_rows(bank.id, rows)
    assert len(entries.read(local, bank)) == 5  # positive control

    code, out, err = _cli(data, "verify", "chat", "--json")
    (row,) = json.loads(out)
    assert code == 1 and row["clean"] is False
    (problem,) = [p for p in row["problems"] if "more than once" in p]
    assert all(entry_id in problem for entry_id in twice)
    assert "membank maintain chat" in problem

    code, out, err = _cli(data, "maintain", "chat")
    assert (code, err) == (0, "")
    kept = entries.read(local, bank)
    assert sorted(e.id for e in kept) == sorted(stored)
    assert {e.id: e.content for e in kept} == stored
    assert _cli(data, "verify", "chat")[0] == 0


def test_a_duplicate_repair_stopped_after_its_append_loses_nothing(
    local: Context, data: str
) -> None:
    """The repair appends one copy before deleting the older ones: stopped in between (as by
    kill -9), the bank holds one copy more, never none, and the next maintain finishes."""
    from memory.store import duplicates

    bank = _with_secret(local, "chat", "qxdupneedle")
    stored = {e.id: e.content for e in entries.read(local, bank)}
    twice = sorted(stored)[:1]
    all_columns = [f.name for f in entries_schema(1)]
    rows = local.store.scan(bank.id, columns=all_columns, where=filters.one_of("entry_id", twice))
    local.store.add_rows(bank.id, rows)  # the old bug: two copies
    copies = local.store.scan(bank.id, columns=all_columns, where=filters.one_of("entry_id", twice))
    kept, _ = duplicates.one_copy(copies)
    local.store.add_rows(bank.id, kept)  # the repair's first step, then "killed"

    assert _cli(data, "verify", "chat")[0] == 1
    assert _cli(data, "maintain", "chat")[0] == 0
    assert {e.id: e.content for e in entries.read(local, bank)} == stored
    assert _cli(data, "verify", "chat")[0] == 0


def test_a_forget_answers_once_the_entry_is_unreadable_and_verify_says_when_it_is_final(
    local: Context, data: str
) -> None:
    """`final=False`: every read path has lost the entry when forget returns, the files still
    hold it and verify says since when; `finish_forget` makes it final and says when."""
    from memory.models import SearchQuery
    from memory.ops import entries as entry_ops

    needle = "qxfastforgetneedle"
    bank = _with_secret(local, "chat", needle)
    gone = _secret_id(local, bank, needle)

    result = entry_ops.forget(local, entry_ops.ForgetRequest("chat", gone, final=False))

    assert result.entry.id == gone and result.receipt.entries == 1
    assert result.receipt.deleted_at is not None and result.receipt.final_at is None
    with pytest.raises(NotFound):
        entries.get_entry(local, bank, gone)
    assert needle not in " ".join(e.content for e in entries.load(local, bank, "k"))
    hits = entry_ops.search(local, entry_ops.SearchRequest("chat", SearchQuery(text=needle)))
    assert gone not in [hit.id for hit in hits.hits]
    assert _files_containing(Path(data), needle.encode())  # not final yet
    health = verify.verify_bank(local, bank)
    since = health.pending_since  # the mark, set just before the delete commit
    assert not health.clean and since is not None and since <= result.receipt.deleted_at
    assert any("not final yet" in problem for problem in health.problems)

    final = entry_ops.finish_forget(local, result)

    assert final.final_at is not None and final.final_at >= final.deleted_at  # type: ignore[operator]
    assert _files_containing(Path(data), needle.encode()) == []
    health = verify.verify_bank(local, bank)
    assert health.clean and health.pending_since is None


def test_the_cli_forget_prints_before_the_prune_and_leaves_the_bank_final(
    local: Context, data: str
) -> None:
    needle = "qxcliforgetneedle"
    bank = _with_secret(local, "chat", needle)
    code, out, err = _cli(data, "forget", "chat", _secret_id(local, bank, needle), "--json")
    assert (code, err) == (0, "") and "forgotten" in json.loads(out)
    assert _files_containing(Path(data), needle.encode()) == []
    assert _cli(data, "verify", "chat")[0] == 0
