"""A reply that matches only through the turn it carries never outranks that turn."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from memory.cli import main


def _run(data: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        code = main(["--data", str(data), *args])
    return code, out.getvalue()


def test_the_turn_with_the_words_ranks_above_the_reply_carrying_it(tmp_path: Path) -> None:
    assert _run(tmp_path, "bank", "create", "--name", "c", "--type", "conversation")[0] == 0
    turns = [
        (
            "bob",
            "so I spent the whole weekend repainting the fence, cleaning out the gutters, "
            "mowing the lawn twice and fixing the squeaky door in the hallway",
        ),
        ("ann", "my water tank leaked"),
        ("bob", "oh no"),
    ]
    for speaker, text in turns:
        assert _run(tmp_path, "write", "c", "--key", "t", "--speaker", speaker, text)[0] == 0
    for method in ("fts", "hybrid"):
        code, out = _run(tmp_path, "--json", "search", "c", "water tank leaked", "--method", method)
        assert code == 0
        ranked = [hit["entry"]["content"] for hit in json.loads(out)]
        assert ranked[0] == "my water tank leaked", (method, ranked)
        if "oh no" in ranked:  # the reply may follow its question, never lead it
            assert ranked.index("oh no") > 0
