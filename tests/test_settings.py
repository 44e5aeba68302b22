"""Where the CLI stores data: a blank, in-memory or file URI is refused before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from compaction_support import run


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
