"""Quoted phrase search keeps working once rows are folded into the full-text index."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import lancedb
import pytest

from memory.cli import main
from memory.store.indices import FTS_COLUMN, FTS_CONFIG, FTS_INDEX


def _run(data: Path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["--data", str(data), *args])
    return code, out.getvalue(), err.getvalue()


def _phrase_hits(data: Path) -> tuple[int, list[str], str]:
    code, out, err = _run(data, "--json", "search", "b", '"water tank"', "--method", "fts")
    return code, [hit["entry"]["content"] for hit in json.loads(out or "[]")], err


def _bank(data: Path) -> None:
    assert _run(data, "bank", "create", "--name", "b", "--type", "general")[0] == 0
    for i in range(20):
        assert _run(data, "write", "b", "--key", "k", f"note {i} about the garden hose")[0] == 0
    assert _run(data, "write", "b", "--key", "k", "the water tank is full")[0] == 0
    assert _run(data, "write", "b", "--key", "k", "a tank of fresh water")[0] == 0
    assert _run(data, "maintain", "b")[0] == 0  # every row folded into the index


def test_a_phrase_matches_the_words_in_order_after_indexing(tmp_path: Path) -> None:
    _bank(tmp_path)
    code, hits, err = _phrase_hits(tmp_path)
    assert (code, err) == (0, "")
    assert hits == ["the water tank is full"]  # not "a tank of fresh water"
    code, out, _ = _run(tmp_path, "--json", "search", "b", "water tank", "--method", "fts")
    assert {hit["entry"]["content"] for hit in json.loads(out)} >= {
        "the water tank is full",
        "a tank of fresh water",
    }


@pytest.mark.slow
def test_an_index_without_positions_is_refused_clearly_then_rebuilt(tmp_path: Path) -> None:
    _bank(tmp_path)
    db = lancedb.connect(str(tmp_path))
    (name,) = [n for n in db.list_tables().tables if n.startswith("entries")]
    old = FTS_CONFIG.__class__(**{**FTS_CONFIG.__dict__, "with_position": False})
    db.open_table(name).create_index(FTS_COLUMN, config=old, name=FTS_INDEX, replace=True)

    code, hits, err = _phrase_hits(tmp_path)
    assert code == 2 and hits == []
    assert "membank maintain" in err and "Traceback" not in err

    assert _run(tmp_path, "maintain", "b")[0] == 0
    code, hits, _ = _phrase_hits(tmp_path)
    assert (code, hits) == (0, ["the water tank is full"])
