"""`membank test-compaction`, `membank lab-runs`, `membank assistant`: output, JSON, exit codes."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from compaction_support import make_bank, run, write_turns

from memory import banks
from memory.context import Context
from memory.store.lance import LanceStore

PASTED = (
    "user: my Brevo 3000 grinder jams\n"
    "Dana (customer): order 88213 was delivered on October 2, 2026\n"
    '{"speaker": "Support", "role": "assistant", "content": "A technician calls tomorrow."}\n'
    "user: mornings please\n"
)


def run_or_exit(*args: str, context: Context) -> tuple[int, str, str]:
    """Run membank in this process; an argparse error (SystemExit 2) becomes its code."""
    from flows.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args), context=lambda data: context)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def pasted(tmp_path: Path) -> Path:
    path = tmp_path / "pasted.txt"
    path.write_text(PASTED, encoding="utf-8")
    return path


def test_a_pasted_test_shows_labels_summary_survivors_and_scores(
    pasted: Path, ctx: Context
) -> None:
    code, out, err = run(
        "test-compaction", "--pasted", str(pasted), "--prompt", "Keep order numbers.", context=ctx
    )

    assert code == 0, err
    assert "summarizer: membank/extractive: extractive summarizer (offline)" in out
    assert "judge:      heuristic judge (offline)" in out
    assert "[extractive summary]" in out
    assert "surviving entries (1, kept verbatim):\n  user: mornings please" in out
    for criterion in ("fact_coverage", "faithfulness", "conciseness", "instructions"):
        assert f"\n{criterion} " in out
    assert "entries:    4: 3 summarized, 1 kept verbatim" in out
    (saved,) = ctx.store.lab_run_bodies(ctx.account)
    assert json.loads(saved)["id"] in out


def test_json_output_is_the_run_record(pasted: Path, ctx: Context) -> None:
    code, out, err = run(
        "test-compaction", "--pasted", str(pasted), "--prompt", "P", "--runs", "2", "--json",
        "--no-save", context=ctx,
    )  # fmt: skip

    assert code == 0, err
    record = json.loads(out)
    assert record["source"] == {"kind": "pasted", "text": PASTED, "bank_type": "conversation"}
    assert record["evaluation"]["runs"] == 2
    assert [e["content"] for e in record["surviving"]] == ["mornings please"]
    assert ctx.store.lab_run_bodies(ctx.account) == []


def test_a_synthetic_test_prints_the_planted_fact_diff(ctx: Context) -> None:
    code, out, err = run(
        "test-compaction", "--synthetic", "espresso machine support", "--count", "12",
        "--seed", "5", "--prompt", "Keep every number.", context=ctx,
    )  # fmt: skip

    assert code == 0, err
    assert "source:     12 synthetic entries (template generator (offline))" in out
    assert "planted facts: " in out and "status" in out and "planted value" in out


def test_preview_prints_the_cost_and_runs_nothing(pasted: Path, ctx: Context) -> None:
    code, out, err = run(
        "test-compaction", "--pasted", str(pasted), "--prompt", "P", "--preview", "--json",
        "--judge", "openai/gpt-4o-mini", "--runs", "2", "--compare", "Q", context=ctx,
    )  # fmt: skip

    assert code == 0, err
    cost = json.loads(out)
    from memory.judge import judge_calls

    assert cost["entries"] == 4
    assert cost["judge_calls"] == 2 * judge_calls("openai/gpt-4o-mini", 2)
    assert ctx.store.lab_run_bodies(ctx.account) == []


def test_a_bank_test_and_the_saved_runs_listing(ctx: Context) -> None:
    bank = make_bank(ctx)
    write_turns(ctx, bank, "c-1", 5)
    before = ctx.store.count(bank.id)

    code, out, err = run(
        "test-compaction", "--bank", "chat", "--key", "c-1", "--prompt", "Keep orders.",
        "--compare", "Keep dates.", context=ctx,
    )  # fmt: skip

    assert code == 0, err
    assert "prompt A prompt: Keep orders." in out and "prompt B prompt: Keep dates." in out
    assert "scored higher" in out
    assert ctx.store.count(bank.id) == before
    code, out, _ = run("lab-runs", "--bank", "chat", "--best", context=ctx)
    assert code == 0
    assert out.count("bank chat, key c-1") == 1  # the best run of that entry set
    code, out, _ = run("lab-runs", "--delete", "--json", context=ctx)
    assert (code, json.loads(out)) == (0, {"deleted": 2})
    code, out, _ = run("lab-runs", context=ctx)
    assert "no saved test runs" in out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--bank", "missing", "--prompt", "P"], 3, "no bank 'missing'"),
        (["--pasted", "EMPTY", "--prompt", "P"], 2, "nothing pasted"),
        (["--pasted", "BAD", "--prompt", "P"], 2, "line 2: bad JSON"),
        (["--pasted", "/nonexistent/x.txt", "--prompt", "P"], 2, "cannot read --pasted"),
        (["--pasted", "GOOD", "--prompt", "P", "--runs", "0"], 2, "use 1 or more"),
        (["--pasted", "GOOD", "--prompt", " "], 2, "compaction prompt is empty"),
        (["--pasted", "GOOD", "--prompt", "P", "--key", "k"], 2, "--key is for --bank"),
        (["--bank", "chat", "--prompt", "P", "--type", "general"], 2, "--type is for"),
        (["--synthetic", "x", "--count", "1", "--prompt", "P"], 2, "count must be 2-500"),
        (["--prompt", "P"], 2, "one of the arguments --bank --pasted --synthetic"),
        (["--pasted", "GOOD", "--prompt", "P", "--judge", "membank/nope"], 2, "unknown offline"),
        (["--bank", "chat", "--prompt", "P", "--judge", "gpt-5-turbo"], 2, "unknown model"),
    ],
)
def test_bad_input_exits_2_and_unknown_banks_3(
    args: list[str], code: int, message: str, ctx: Context, tmp_path: Path
) -> None:
    make_bank(ctx)
    files = {"EMPTY": "\n\n", "BAD": "user: hi\n{nope\n", "GOOD": PASTED}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    argv = [str(tmp_path / a) if a in files else a for a in args]

    got, out, err = run_or_exit("test-compaction", *argv, context=ctx)

    assert (got, out) == (code, "")
    assert message in err
    assert ctx.store.lab_run_bodies(ctx.account) == []


def test_assistant_prints_a_proposal_and_changes_nothing(ctx: Context) -> None:
    bank = make_bank(ctx)

    code, out, err = run(
        "assistant", "customer support, about 50 messages per day per customer", context=ctx
    )

    assert code == 0, err
    assert "proposal (rule-based assistant (offline)):" in out
    assert "max_tokens         8,000" in out
    assert "2,000 tokens/day; max_tokens 8,000 keeps ~4 days verbatim" in out
    assert "nothing changed" in out
    assert banks.get(ctx, bank.id) == bank


def test_assistant_apply_accepts_it_on_the_bank(ctx: Context) -> None:
    make_bank(ctx, max_tokens=100)

    code, out, err = run(
        "assistant", "support, 10 messages a day, delete after 30 days", "--apply", "chat",
        "--json", context=ctx,
    )  # fmt: skip

    assert code == 0, err
    shown = json.loads(out)
    stored = banks.get(ctx, "chat")
    assert shown["bank"]["max_tokens"] == stored.max_tokens == shown["proposal"]["max_tokens"]
    assert (stored.max_turns, stored.retention_days) == (40, 30)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["user preferences", "--apply", "chat", "--type", "general"], 2, "is a conversation bank"),
        (["support", "--apply", "missing"], 3, "no bank 'missing'"),
        (["  "], 2, "description is empty"),
    ],
)
def test_assistant_errors(args: list[str], code: int, message: str, ctx: Context) -> None:
    bank = make_bank(ctx)

    got, out, err = run_or_exit("assistant", *args, context=ctx)

    assert (got, out) == (code, "")
    assert message in err
    assert banks.get(ctx, bank.id) == bank


def test_the_console_script_reads_pasted_entries_from_stdin(tmp_path: Path) -> None:
    data = tmp_path / "db"
    LanceStore(str(data))
    env = {**os.environ, "MEMBANK_URI": str(data), "MEMBANK_BLOCK_MODEL_REQUESTS": "1"}
    script = Path(sys.executable).with_name("membank")

    done = subprocess.run(
        [str(script), "test-compaction", "--pasted", "-", "--prompt", "Keep orders.", "--json"],
        input=PASTED.encode(),
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr.decode()
    record = json.loads(done.stdout)
    assert record["summarizer"] == "membank/extractive: extractive summarizer (offline)"
    assert record["evaluation"]["judge"] == "heuristic judge (offline)"


def test_instructions_with_nothing_checkable_print_n_a_not_zero(pasted: Path, ctx: Context) -> None:
    code, out, err = run(
        "test-compaction", "--pasted", str(pasted), "--prompt", "Summarize it.", context=ctx
    )
    assert code == 0, err
    [row] = [line for line in out.splitlines() if line.startswith("instructions")]
    assert row.split()[1] == "n/a" and "no instruction the heuristic judge can check" in row
