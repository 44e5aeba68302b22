"""The user's own modes and templates (MEMBANK_CONFIG_DIR): odd files in the folder, and
banks whose mode is no longer defined (the folder unset, moved or changed)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from compaction_support import config_folder, run

from memory import banks, entries
from memory.config import CONFIG_DIR_ENV, modes, templates
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import EntryIn

MINE = """\
mine:
  embedder: membank/hashing
  dims: 24
  chunk_size: 200
  chunk_overlap: 0
"""
"""A user mode whose vectors are narrower than every shipped mode's."""
MISSING_MODE = (
    f"bank 'notes' uses unknown mode 'mine' ({CONFIG_DIR_ENV} is unset): "
    f"set {CONFIG_DIR_ENV} to the folder whose modes.yaml defines 'mine'"
)


# odd files in the folder ---------------------------------------------------------------


def _folder_in_place(folder: Path) -> None:
    (folder / "modes.yaml").mkdir()


def _dangling_link(folder: Path) -> None:
    (folder / "modes.yaml").symlink_to(folder / "moved-away.yaml")


def _text(name: str, text: str) -> object:
    return lambda folder: (folder / name).write_text(text, encoding="utf-8")


MODE_BODY = "  embedder: x/y\n  dims: 4\n  chunk_size: 8\n  chunk_overlap: 0\n"


@pytest.mark.parametrize(
    ("make", "file", "message"),
    [
        (_folder_in_place, "modes.yaml", "is a folder, not a file"),
        (_dangling_link, "modes.yaml", "is a symbolic link to .*moved-away.yaml.*does not exist"),
        (
            _text("modes.yaml", f"a:\n{MODE_BODY}b:\n{MODE_BODY}a:\n{MODE_BODY}"),
            "modes.yaml",
            r"line 11, column 1: 'a' is given twice: keep one",
        ),
        (
            _text("modes.yaml", f"a:\n{MODE_BODY}  dims: 8\n"),
            "modes.yaml",
            r"line 6, column 3: 'dims' is given twice",
        ),
        (
            _text("templates.yaml", "t: {type: general, mode: fast}\nt: {type: conversation}\n"),
            "templates.yaml",
            r"line 2, column 1: 't' is given twice",
        ),
    ],
    ids=["folder", "dangling-symlink", "duplicate-mode", "duplicate-setting", "duplicate-template"],
)
def test_odd_config_files_are_refused_with_the_path_and_the_fix(
    make: object, file: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = config_folder(tmp_path, monkeypatch)
    make(folder)  # type: ignore[operator]
    with pytest.raises(InvalidInput, match=message) as raised:
        modes()
        templates()
    assert str(raised.value).startswith(f"{folder / file}: ")
    command = "modes" if file == "modes.yaml" else "templates"
    code, out, err = run(command)
    assert (code, out) == (2, "")
    assert err.startswith(f"membank: error: {folder / file}: ") and err.count("\n") == 1


def test_a_merge_key_may_be_overridden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`<<: *base` then one of its keys again is YAML's override, not a duplicate."""
    config_folder(
        tmp_path,
        monkeypatch,
        templates_yaml="t: &base {type: general, mode: fast}\nu:\n  <<: *base\n  mode: balanced\n",
    )
    assert (templates()["t"].mode, templates()["u"].mode) == ("fast", "balanced")


def test_a_link_to_a_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = config_folder(tmp_path, monkeypatch)
    (tmp_path / "kept-elsewhere.yaml").write_text(MINE, encoding="utf-8")
    (folder / "modes.yaml").symlink_to(tmp_path / "kept-elsewhere.yaml")
    assert modes()["mine"].dims == 24


# a bank whose mode is gone -------------------------------------------------------------


@pytest.fixture
def orphan(data: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Create bank `notes` in user mode `mine` with two entries, then unset the folder."""
    config_folder(tmp_path, monkeypatch, modes_yaml=MINE)
    code, _, err = run(
        "bank", "create", "--name", "notes", "--type", "general", "--mode", "mine",
        "--retention-days", "30", "--data", data,
    )  # fmt: skip
    assert code == 0, err
    for text in ("The boiler is serviced every October.", "Zoe prefers tea to coffee."):
        code, _, err = run("write", "notes", "--key", "house", text, "--data", data)
        assert code == 0, err
    monkeypatch.delenv(CONFIG_DIR_ENV)
    return data


def test_reads_of_a_bank_whose_mode_is_gone_still_work(orphan: str, tmp_path: Path) -> None:
    code, out, err = run("load", "notes", "--key", "house", "--data", orphan, "--json")
    assert code == 0, err
    assert next(e["content"] for e in json.loads(out)) == "The boiler is serviced every October."

    code, out, err = run("stats", "notes", "--data", orphan, "--json")
    assert code == 0, err
    assert json.loads(out)["total_entries"] == 2

    code, _, err = run(
        "export", "notes", "--format", "json", "--out", str(tmp_path / "n.json"), "--data", orphan
    )
    assert code == 0, err
    assert len(json.loads((tmp_path / "n.json").read_text(encoding="utf-8"))["entries"]) == 2

    out_path = tmp_path / "n.parquet"
    code, _, err = run(
        "export", "notes", "--format", "parquet", "--with-vectors", "--out", str(out_path),
        "--data", orphan,
    )  # fmt: skip
    assert code == 0, err
    vectors = pq.read_table(out_path).column("vectors").to_pylist()
    assert [len(v[0]) for v in vectors] == [24, 24]  # the table's width, not a shipped mode's


@pytest.mark.parametrize(
    "command",
    [
        ("write", "notes", "--key", "house", "The gutters need clearing."),
        ("search", "notes", "boiler"),
    ],
    ids=["write", "search"],
)
def test_what_needs_the_mode_names_it_and_the_folder(orphan: str, command: tuple[str]) -> None:
    code, out, err = run(*command, "--data", orphan)
    assert (code, out) == (2, "")
    assert err.startswith(f"membank: error: {MISSING_MODE}") and err.count("\n") == 1


def test_a_folder_that_no_longer_defines_the_mode_is_named(
    orphan: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other-configs"
    other.mkdir()
    monkeypatch.setenv(CONFIG_DIR_ENV, str(other))
    code, _, err = run("search", "notes", "boiler", "--data", orphan)
    assert code == 2
    assert f"({other / 'modes.yaml'} does not define it)" in err


def test_retention_and_forget_of_a_bank_whose_mode_is_gone_still_delete(
    orphan: str, local: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONFIG_DIR_ENV, str(tmp_path / "my-configs"))  # back, to write an old entry
    notes = banks.get(local, "notes")
    old = local.clock.now() - timedelta(days=40)
    entries.write(local, notes, [EntryIn(key="house", content="zzexpired lease", created_at=old)])
    monkeypatch.delenv(CONFIG_DIR_ENV)

    code, out, err = run("retention", "--all", "--data", orphan, "--json")

    assert (code, err) == (0, "")
    result = json.loads(out)[0]
    assert (result["bank_name"], result["status"], result["deleted"]) == ("notes", "deleted", 1)
    left = entries.read(local, notes)
    assert [e.content for e in left] == [
        "The boiler is serviced every October.",
        "Zoe prefers tea to coffee.",
    ]
    code, _, err = run("forget", "notes", left[0].id, "--data", orphan)
    assert code == 0, err
    assert [e.content for e in entries.read(local, notes)] == ["Zoe prefers tea to coffee."]
    files = [p for p in Path(orphan).rglob("*") if p.is_file()]
    assert not [p for p in files if b"zzexpired" in p.read_bytes() or b"boiler" in p.read_bytes()]
