"""`membank memory remember | recall | list | forget` and `membank user wipe`, in process and as
the console script."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from compaction_support import run

from flows.cli import main
from memory.agents import longterm
from memory.context import Context


def _run_or_exit(ctx: Context, *args: str) -> tuple[int, str, str]:
    """Run membank in process; an argument argparse refuses is its exit code (2)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args), context=lambda data: ctx)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def _remember(ctx: Context, *args: str) -> dict[str, object]:
    code, out, err = run("memory", "remember", "--json", *args, context=ctx)
    assert code == 0, err
    stored: dict[str, object] = json.loads(out)
    return stored


def test_remember_recall_list_and_forget(ctx: Context) -> None:
    tea = _remember(
        ctx, "--user", "ann", "--agent", "concierge", "--scope", "agent", "--memory-type",
        "preference", "--tag", "Drinks", "--tag", "drinks", "Ann drinks green tea",
    )  # fmt: skip
    _remember(ctx, "--user", "ann", "Ann lives in Lyon")
    assert (tea["scope"], tea["type"], tea["tags"], tea["agent"]) == (
        "agent",
        "preference",
        ["drinks"],
        "concierge",
    )

    code, out, _ = run(
        "memory",
        "recall",
        "--user",
        "ann",
        "--agent",
        "concierge",
        "green tea",
        "--json",
        context=ctx,
    )
    assert code == 0
    found = json.loads(out)
    assert found[0]["memory"]["id"] == tea["id"] and found[0]["score"] > found[1]["score"]
    code, out, _ = run(
        "memory", "recall", "--user", "ann", "--agent", "support-mail", "tea", context=ctx
    )
    assert code == 0 and "green tea" not in out and "Lyon" in out  # another agent

    code, out, _ = run("memory", "list", "--user", "ann", context=ctx)
    assert code == 0 and "green tea" in out and "Lyon" in out

    code, out, _ = run("memory", "forget", "--user", "ann", str(tea["id"]), context=ctx)
    assert code == 0 and f"forgot {tea['id']}" in out
    assert [m.content for m in longterm.memories(ctx, user="ann")] == ["Ann lives in Lyon"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["remember", "--user", "ann", "  "], "memory content is empty"),
        (["remember", "--user", "ann", "--scope", "agent", "tea"], "needs an agent"),
        (["remember", "--user", "ann", "--memory-type", "opinion", "tea"], "unknown memory type"),
        (["remember", "--user", "ann", "--tag", "c++", "tea"], "not a keyword"),
        (["remember", "--user", "", "tea"], "user id"),
        (["remember", "--user", "ann", "--scope", "team", "tea"], "unknown scope"),
        (["remember", "tea"], "--user"),
        (["recall", "--user", "ann", "tea", "-k", "0"], "use 1 or more"),
        (["recall", "--user", "ann", "tea", "-k", "1001"], "between 1 and 1000"),
    ],
)
def test_bad_input_is_exit_2_with_a_message_and_stores_nothing(
    ctx: Context, args: list[str], message: str
) -> None:
    code, out, err = _run_or_exit(ctx, "memory", *args)
    assert code == 2 and message in err and out == ""
    assert longterm.memory_bank(ctx) is None


def test_forgetting_an_unknown_or_another_users_memory_is_exit_3(ctx: Context) -> None:
    bobs = _remember(ctx, "--user", "bob", "Bob plays chess")
    for user, memory_id in (("ann", str(bobs["id"])), ("bob", "no-such-id")):
        code, _, err = run("memory", "forget", "--user", user, memory_id, context=ctx)
        assert code == 3 and "no memory" in err
    assert len(longterm.memories(ctx, user="bob")) == 1


def test_user_wipe_prints_the_receipt(ctx: Context) -> None:
    for text in ("Ann drinks tea", "Ann runs"):
        _remember(ctx, "--user", "ann", text)
    _remember(ctx, "--user", "bob", "Bob plays chess")

    code, out, err = run("user", "wipe", "ann", "--json", context=ctx)

    assert code == 0, err
    receipt = json.loads(out)
    assert receipt["user"] == "ann"
    assert receipt["counts"] == {"long_term": 2}  # no conversations: no other layer bank
    (line,) = [t for t in receipt["tables"] if t["layer"] == "long_term"]
    assert line["rows_removed"] == 2 and line["version_after"] >= 1
    assert longterm.memories(ctx, user="ann") == []
    assert len(longterm.memories(ctx, user="bob")) == 1
    code, out, _ = run("user", "wipe", "ann", context=ctx)
    assert code == 0 and "0 rows removed" in out and "long_term" in out
    code, _, err = run("user", "wipe", "a\nb", context=ctx)
    assert code == 2 and "user id" in err


def test_the_console_script_wipes_a_user_with_a_hostile_id(data: str, local: Context) -> None:
    hostile = "x' OR '1'='1"
    longterm.remember(local, user=hostile, content="likes tea")
    longterm.remember(local, user="bob", content="likes chess")
    env = {k: v for k, v in os.environ.items() if k != "MEMBANK_ACCOUNT"}
    script = Path(sys.executable).parent / "membank"

    wiped = subprocess.run(
        [str(script), "user", "wipe", hostile, "--json", "--data", data],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert wiped.returncode == 0, wiped.stderr
    assert json.loads(wiped.stdout)["counts"]["long_term"] == 1
    assert longterm.memories(local, user=hostile) == []
    assert [m.content for m in longterm.memories(local, user="bob")] == ["likes chess"]
