"""Where the CLI stores data: a blank, in-memory or file URI is refused before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from compaction_support import run
from storage_support import read_only_view

from memory.settings import Settings, checked_uri
from memory.store import locks


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("", "--data is empty: give a folder or an s3:// or gs:// URI"),
        ("  ", "--data is empty"),
        ("memory://", "--data 'memory://' is not supported (its data would vanish"),
        ("memory://x", "--data 'memory://x' is not supported"),
    ],
)
def test_unusable_data_options_are_refused(
    given: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("--data", given, "bank", "create", "--name", "n", "--type", "general")
    assert (code, out) == (2, "")
    assert err.startswith(f"membank: error: {message}") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # nothing written anywhere, not even ./.membank


def test_a_file_named_as_the_storage_folder_is_refused(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("mine", encoding="utf-8")
    code, _, err = run("--data", str(notes), "bank", "list")
    assert code == 2
    expected = f"--data {str(notes)!r} is a file, not a folder: give the storage folder"
    assert err == f"membank: error: {expected}\n"
    assert notes.read_text(encoding="utf-8") == "mine"


def test_an_empty_membank_uri_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMBANK_URI", "")
    code, _, err = run("bank", "list")
    assert code == 2
    assert err.startswith("membank: error: MEMBANK_URI is empty")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("account", ["", "   ", "a\nb", "x" * 201])
def test_an_unusable_membank_account_is_refused(
    account: str, data: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMBANK_ACCOUNT", account)
    code, out, err = run("bank", "create", "--name", "n", "--type", "general", "--data", data)
    assert (code, out) == (2, "")
    assert err.startswith("membank: error: MEMBANK_ACCOUNT ") and err.count("\n") == 1
    monkeypatch.delenv("MEMBANK_ACCOUNT")
    assert run("bank", "list", "--data", data, "--json") == (0, "[]\n", "")


COMMANDS = [
    ["bank", "list"],
    ["bank", "create", "--name", "n", "--type", "general"],
    ["bank", "show", "n"],
    ["write", "n", "--key", "k", "hello"],
    ["search", "n", "hello"],
    ["load", "n", "--key", "k"],
    ["forget", "n", "some-id"],
    ["compact", "n"],
    ["retention", "--all"],
    ["stats", "n"],
    ["export", "n", "--format", "json", "--out", "out.json"],
    ["import", "in.json"],
    ["ingest", "in.jsonl", "--bank", "n"],
    ["demo"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_storage_path_under_a_file_is_refused_by_every_command(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    under = str(tmp_path / "notes.txt" / "banks")
    code, out, err = run(*command, "--data", under)
    assert (code, out) == (2, "")
    assert err == (
        f"membank: error: --data {under!r} is under {str(tmp_path / 'notes.txt')!r}, which is "
        "a file, not a folder: give a storage folder path whose parents are folders\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_membank_uri_under_a_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    monkeypatch.setenv("MEMBANK_URI", str(tmp_path / "f" / "a" / "b"))
    code, _, err = run("bank", "list")
    assert code == 2
    assert err.startswith(f"membank: error: MEMBANK_URI {str(tmp_path / 'f' / 'a' / 'b')!r} is")


@pytest.mark.parametrize("source", ["--data", "MEMBANK_URI"])
def test_a_tilde_is_the_home_folder(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    given = ["--data", "~/banks"] if source == "--data" else []
    if source == "MEMBANK_URI":
        monkeypatch.setenv("MEMBANK_URI", "~/banks")
    code, _, err = run(*given, "bank", "create", "--name", "n", "--type", "general")
    assert (code, err) == (0, "")
    assert list(work.iterdir()) == []  # no folder named `~`
    assert (home / "banks" / "banks.lance").is_dir()
    assert checked_uri("~/banks", Settings()) == str(home / "banks")
    assert checked_uri("s3://bucket/~x", Settings()) == "s3://bucket/~x"  # URIs as given


def test_reads_and_exports_work_on_read_only_storage(tmp_path: Path) -> None:
    data = tmp_path / "db"
    for command in (
        ["bank", "create", "--name", "n", "--type", "general"],
        ["write", "n", "--key", "k", "the tulips bloom in april"],
        ["write", "n", "--key", "k", "the roses bloom in june"],
    ):
        assert run(*command, "--data", str(data))[0] == 0
    with read_only_view(data) as view:
        code, out, err = run("bank", "list", "--json", "--data", str(view))
        assert (code, err) == (0, "") and [b["name"] for b in json.loads(out)] == ["n"]
        code, out, err = run("search", "n", "tulips", "--json", "--data", str(view))
        assert (code, err) == (0, "")
        assert json.loads(out)[0]["entry"]["content"] == "the tulips bloom in april"
        code, out, err = run("load", "n", "--key", "k", "--json", "--data", str(view))
        assert (code, err) == (0, "") and len(json.loads(out)) == 2
        code, out, err = run("stats", "n", "--json", "--data", str(view))
        assert (code, err) == (0, "") and json.loads(out)["total_entries"] == 2
        for fmt in ("json", "parquet"):
            target = tmp_path / f"out.{fmt}"
            code, out, err = run(
                "export", "n", "--format", fmt, "--out", str(target), "--data", str(view)
            )
            assert (code, err) == (0, ""), err
            assert out.startswith(f"exported 2 entries to {target}")
        assert len(pq.read_table(tmp_path / "out.parquet")) == 2
        code, out, err = run("write", "n", "--key", "k", "more", "--data", str(view))
        assert (code, out) == (1, "")
        assert "Read-only file system" in err and err.count("\n") == 1


def test_a_read_through_a_read_only_mount_still_holds_off_a_prune(tmp_path: Path) -> None:
    data = tmp_path / "db"
    data.mkdir()
    with locks.pruning(str(data), "t"):  # a prune has run here: its lock file exists
        pass
    with (
        read_only_view(data) as view,
        locks.reading(str(view), "t"),
        locks._file_lock(str(data), "t.versions", 0) as held,
    ):
        assert not held  # the writer's prune waits for the read-only reader
    with locks._file_lock(str(data), "t.versions", 0) as held:
        assert held
