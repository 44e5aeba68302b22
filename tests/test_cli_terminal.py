"""Text output is safe for a terminal: stored control sequences are shown, never acted on,
and wide characters keep table columns aligned."""

from __future__ import annotations

import io
import json
import unicodedata
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from memory.cli import main

HOSTILE = "hello \x1b]0;pwned\x07 there\x1b[2J\x9b31m end"


def width(text: str) -> int:
    """Terminal columns of `text`: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _run(data: Path, *args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["--data", str(data), *args])
    return code, out.getvalue()


def _controls(text: str) -> set[str]:
    return {c for c in text if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) <= 0x9F}


def test_load_and_search_escape_control_sequences(tmp_path: Path) -> None:
    assert _run(tmp_path, "bank", "create", "--name", "b", "--type", "general")[0] == 0
    assert _run(tmp_path, "write", "b", "--key", "k", HOSTILE)[0] == 0
    for args in (("load", "b", "--key", "k"), ("search", "b", "hello")):
        code, out = _run(tmp_path, *args)
        assert code == 0
        assert _controls(out) == set(), args
        assert "\\x1b]0;pwned\\x07" in out  # shown, so the reader sees what is stored
    code, out = _run(tmp_path, "--json", "load", "b", "--key", "k")
    assert _controls(out) == set()
    assert json.loads(out)[0]["content"] == HOSTILE  # JSON still carries the exact text


def test_wide_characters_keep_columns_aligned(tmp_path: Path) -> None:
    for name in ("日本語のメモ", "notes"):
        assert _run(tmp_path, "bank", "create", "--name", name, "--type", "general")[0] == 0
    code, out = _run(tmp_path, "bank", "list")
    assert code == 0
    lines = out.splitlines()
    header, rows = lines[0], [line for line in lines[2:] if line]
    second = header.index(header.split()[1])  # where the second column starts
    for row in rows:
        first_cell = row.split("  ")[0]
        assert width(row[: len(first_cell)]) <= second
        rest = row[len(first_cell) :]
        assert width(first_cell) + len(rest) - len(rest.lstrip(" ")) == second
