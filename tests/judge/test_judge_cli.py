"""`membank judge`: a summary scored against a bank's or a pasted file's entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from judge_support import FAITHFUL, INVENTED, PROMPT, SOURCE, JudgeScript, run_cli

from memory import banks, entries
from memory.context import Context
from memory.judge import HEURISTIC_LABEL, Evaluation
from memory.models import BankCreate, EntryIn


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def pasted(tmp_path: Path) -> str:
    """SOURCE as a pasted file: JSON lines and "speaker: text" lines mixed."""
    rows = [json.dumps({"speaker": "Dana", "role": "user", "content": SOURCE[1][6:]})]
    rows += [json.dumps({"speaker": "agent", "content": SOURCE[2][7:]}), *SOURCE[3:]]
    return write(tmp_path, "pasted.jsonl", "\n".join(["", *rows, ""]))


@pytest.fixture
def summary(tmp_path: Path) -> str:
    return write(tmp_path, "summary.txt", INVENTED)


@pytest.fixture
def chat(ctx: Context) -> banks.Bank:
    """A conversation bank holding SOURCE under key c1 and another thread under c2."""
    bank = banks.create(
        ctx, BankCreate(name="support", type="conversation", compaction_prompt=PROMPT)
    )
    items = []
    for row in SOURCE:
        speaker, text = row.split(": ", 1)
        items.append(EntryIn(key="c1", speaker=speaker, content=text))
    items.append(EntryIn(key="c2", speaker="Lee", content="The report is due on June 9."))
    entries.write(ctx, bank, items)
    return bank


def test_pasted_entries_text_output(ctx: Context, pasted: str, summary: str) -> None:
    code, out, err = run_cli(
        "judge", "--pasted", pasted, "--summary", summary, "--prompt", PROMPT, context=ctx
    )
    assert code == 0, err
    assert out.splitlines()[0].startswith(f"judge: {HEURISTIC_LABEL}; runs: 1")
    for name in ("fact_coverage", "faithfulness", "conciseness", "instructions"):
        assert name in out
    assert "checked: under 60 words" in out
    assert "overall: " in out and "invented number: 4200" in out


def test_json_output_is_the_evaluation(ctx: Context, pasted: str, summary: str) -> None:
    code, out, _ = run_cli(
        "judge", "--pasted", pasted, "--summary", summary, "--runs", "2", "--json", context=ctx
    )
    assert code == 0
    result = Evaluation.model_validate_json(out)
    assert result.judge == HEURISTIC_LABEL and result.runs == 2
    assert all(len(c.scores) == 2 for c in result.criteria if c.error is None)
    assert "invented number: 4200" in result.flags
    assert "no prompt" in (result.criterion("instructions").error or "")


def test_general_entries_are_pasted_as_plain_lines(ctx: Context, tmp_path: Path) -> None:
    notes = write(tmp_path, "notes.txt", "The report is due on June 9.\nZephyr pays 310.\n")
    summary = write(tmp_path, "s.txt", "Zephyr pays 310; the report is due on June 9.")
    args = ("judge", "--pasted", notes, "--summary", summary, "--json")
    assert run_cli(*args, context=ctx)[0] == 2  # a conversation needs `speaker: text`
    code, out, err = run_cli(*args, "--type", "general", context=ctx)
    assert code == 0, err
    assert not Evaluation.model_validate_json(out).flags


def test_a_bank_partition_is_judged_with_the_bank_prompt(
    ctx: Context, chat: banks.Bank, tmp_path: Path
) -> None:
    versions = ctx.store.version_count(chat.id)
    good = write(tmp_path, "good.txt", FAITHFUL)
    code, out, err = run_cli(
        "judge", "--bank", "support", "--key", "c1", "--summary", good, "--json", context=ctx
    )
    assert code == 0, err
    result = Evaluation.model_validate_json(out)
    assert "under 60 words" in result.criterion("instructions").reason  # the bank's prompt
    assert not [flag for flag in result.flags if flag.startswith("invented")]
    whole = run_cli("judge", "--bank", "support", "--summary", good, "--json", context=ctx)[1]
    everything = Evaluation.model_validate_json(whole)
    assert everything.compression_ratio < result.compression_ratio  # c2 is in the source too
    assert ctx.store.version_count(chat.id) == versions  # judging changes nothing


def test_an_llm_judge_by_name(ctx: Context, served: JudgeScript, pasted: str, summary: str) -> None:
    code, out, err = run_cli(
        "judge",
        "--pasted",
        pasted,
        "--summary",
        summary,
        "--judge",
        "openai/judge-test",
        context=ctx,
    )
    assert code == 0, err
    assert out.startswith("judge: openai/judge-test (deepeval)")
    assert "judge tokens: " in out and "scripted faithfulness reason" in out
    assert "summarization" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pasted", "missing.txt", "--summary", "{summary}"], "does not exist"),
        (["--pasted", "{pasted}", "--summary", "missing.txt"], "--summary missing.txt"),
        (["--pasted", "{pasted}", "--summary", "{empty}"], "the file is empty"),
        (["--pasted", "{empty}", "--summary", "{summary}"], "nothing pasted"),
        (["--pasted", "{bad_json}", "--summary", "{summary}"], "line 2: bad JSON"),
        (["--pasted", "{no_content}", "--summary", "{summary}"], "line 1:"),
        (["--bank", "support", "--type", "general", "--summary", "{summary}"], "--type is for"),
        (["--pasted", "{pasted}", "--summary", "{summary}", "--runs", "0"], "1 or more"),
        (["--pasted", "{pasted}", "--summary", "{summary}", "--runs", "50"], "runs must be"),
        (["--pasted", "{pasted}", "--bank", "support", "--summary", "{summary}"], "not allowed"),
        (["--summary", "{summary}"], "one of the arguments --bank --pasted is required"),
        (["--pasted", "{pasted}", "--key", "c1", "--summary", "{summary}"], "--key needs --bank"),
        (["--bank", "support", "--key", "nobody", "--summary", "{summary}"], "no entries under"),
        (
            ["--pasted", "{pasted}", "--summary", "{summary}", "--judge", "membank/extractive"],
            "unknown offline judge",
        ),
        (
            ["--pasted", "{pasted}", "--summary", "{summary}", "--judge", "gpt-5-turbo"],
            "judge: unknown model 'gpt-5-turbo': litellm cannot route it",
        ),
    ],
)
def test_bad_input_exits_2(
    ctx: Context,
    chat: banks.Bank,
    pasted: str,
    summary: str,
    tmp_path: Path,
    args: list[str],
    message: str,
) -> None:
    files = {
        "pasted": pasted,
        "summary": summary,
        "empty": write(tmp_path, "empty.txt", "\n  \n"),
        "bad_json": write(tmp_path, "bad.jsonl", 'Dana: hi\n{"content": "x"\n'),
        "no_content": write(tmp_path, "nocontent.jsonl", '{"speaker": "Dana"}\n'),
    }
    code, out, err = run_cli("judge", *[a.format(**files) for a in args], context=ctx)
    assert code == 2, (out, err)
    assert message in err and out == ""


def test_an_unknown_bank_exits_3(ctx: Context, summary: str) -> None:
    code, _, err = run_cli("judge", "--bank", "nope", "--summary", summary, context=ctx)
    assert code == 3 and "no bank 'nope'" in err


def test_the_console_script_judges_with_the_offline_default(
    tmp_path: Path, pasted: str, summary: str
) -> None:
    env = {**os.environ, "MEMBANK_URI": str(tmp_path / "db")}
    script = Path(sys.executable).with_name("membank")
    out = subprocess.run(
        [str(script), "judge", "--pasted", pasted, "--summary", summary, "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    result = Evaluation.model_validate_json(out.stdout)
    assert result.judge == HEURISTIC_LABEL and "invented number: 4200" in result.flags
    assert not (tmp_path / "db").exists()  # a pasted source needs no storage
