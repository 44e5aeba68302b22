"""The `membank` command: JSON output, exit codes, one-line errors, nothing written on failure.

A real process start costs seconds of imports on a small machine, so a few calls of each
kind (JSON success, exit 2, exit 3, raw stdin bytes) run as real `membank` processes, side by
side when they cannot affect each other; the other checks call the same entry point,
`memory.cli.main`, in this process.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from memory import banks, entries
from memory.cli import main
from memory.cli.args import parse_time
from memory.config import modes, templates
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import BankCreate, BankUpdate, EntryIn
from memory.wiring import open_context

_SCRIPT = shutil.which("membank", path=str(Path(sys.executable).parent))
MEMBANK = [_SCRIPT] if _SCRIPT else [sys.executable, "-c", "from memory.cli import run; run()"]
BANK_FIELDS = {
    "id",
    "name",
    "description",
    "type",
    "mode",
    "compaction_prompt",
    "max_tokens",
    "max_turns",
    "retention_days",
    "created_at",
    "updated_at",
    "account",
}


@dataclass(frozen=True)
class Run:
    """One finished membank command."""

    args: tuple[str | bytes, ...]
    code: int
    out: str
    err: str

    def json(self) -> Any:
        """Return stdout parsed as JSON, after checking the command succeeded."""
        assert self.code == 0, (self.args, self.code, self.err)
        return json.loads(self.out)

    def failed(self, code: int, *words: str) -> None:
        """Check the exit code, an empty stdout and a one-line stderr naming `words`."""
        assert self.code == code, (self.args, self.code, self.out, self.err)
        assert self.out == "", self.out
        message = self.err.strip()
        assert message and "\n" not in message, self.err
        assert "Traceback" not in message
        for word in words:
            assert word.lower() in message.lower(), (word, message)


Call = tuple[Sequence[str | bytes], bytes | None]


def _argv(data: Path, args: Sequence[str | bytes]) -> list[str | bytes]:
    return list(args) if "--data" in args else [*args, "--data", str(data)]


def process(data: Path, *args: str | bytes, stdin: bytes | None = None) -> Run:
    """Run `membank ARGS --data DATA` as a real process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMBANK_")}
    env.update(MEMBANK_ACCOUNT="local", MEMBANK_BLOCK_MODEL_REQUESTS="1")
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    done = subprocess.run(
        [*MEMBANK, *_argv(data, args)],
        input=stdin or b"",
        capture_output=True,
        env=env,
        cwd=data.parent,
        timeout=300,
        check=False,
    )
    return Run(
        tuple(args),
        done.returncode,
        done.stdout.decode("utf-8"),
        done.stderr.decode("utf-8", "replace"),
    )


def processes(data: Path, calls: Sequence[Call]) -> list[Run]:
    """Run independent membank processes (reads and rejected writes) side by side."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        return list(pool.map(lambda call: process(data, *call[0], stdin=call[1]), calls))


def here(data: Path, *args: str, stdin: bytes = b"") -> Run:
    """Run `membank ARGS --data DATA` through `memory.cli.main` in this process."""
    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    with redirect_stdout(out), redirect_stderr(err), mock.patch.object(sys, "stdin", fake_stdin):
        try:
            code = main([str(a) for a in _argv(data, args)])
        except SystemExit as exc:  # argparse errors
            code = exc.code if isinstance(exc.code, int) else 1
    return Run(tuple(args), code, out.getvalue(), err.getvalue())


@pytest.fixture(autouse=True)
def _local_account(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("MEMBANK_URI", "MEMBANK_ACCOUNT"):
        monkeypatch.delenv(name, raising=False)
    yield


def _local(data: Path) -> Context:
    return open_context(str(data), account="local")


@pytest.mark.process
def test_bank_templates_and_modes_commands(tmp_path: Path) -> None:
    data = tmp_path / "db"
    listed_templates, negative, created = processes(
        data,
        [
            (["templates", "--json"], None),
            (["bank", "create", "--name", "neg", "--type", "general", "--max-tokens", "-1"], None),
            (
                [
                    *("bank", "create", "--name", "support", "--type", "conversation"),
                    *("--max-tokens", "500", "--retention-days", "30", "--json"),
                ],
                None,
            ),
        ],
    )
    found = listed_templates.json()
    assert len(found) >= 6
    assert {t["name"] for t in found} == set(templates())
    assert all({"type", "mode", "retention_days", "compaction_prompt"} <= set(t) for t in found)
    negative.failed(2, "--max-tokens", "negative")

    support = created.json()
    assert set(support) >= BANK_FIELDS
    assert (support["name"], support["type"], support["mode"]) == (
        "support",
        "conversation",
        "balanced",
    )
    assert (support["max_tokens"], support["max_turns"], support["retention_days"]) == (
        500,
        None,
        30,
    )
    assert support["account"] == "local"

    listed_modes = here(data, "modes", "--json").json()
    assert {m["name"]: m["dims"] for m in listed_modes} == {
        name: mode.dims for name, mode in modes().items()
    }
    # global options before the subcommand work too
    prefs = here(
        data,
        *("--json", "--data", str(data), "bank", "create", "--name", "prefs"),
        *("--template", "user-preferences", "--max-turns", "0"),
    ).json()
    template = templates()["user-preferences"]
    assert (prefs["type"], prefs["mode"], prefs["retention_days"]) == (
        template.type,
        template.mode,
        template.retention_days,
    )
    assert prefs["compaction_prompt"] == template.compaction_prompt
    assert prefs["max_tokens"] == template.max_tokens and prefs["max_turns"] is None
    general = here(data, "bank", "create", "--name", "notes", "--type", "general", "--json")
    assert general.json()["retention_days"] is None  # type-aware default on the CLI

    updated = here(
        data,
        *("bank", "update", "support", "--max-turns", "5", "--retention-indefinite"),
        *("--description", "help desk", "--json"),
    ).json()
    assert (updated["id"], updated["max_turns"], updated["retention_days"]) == (
        support["id"],
        5,
        None,
    )
    assert updated["description"] == "help desk" and updated["max_tokens"] == 500

    retype, unknown, bad_mode = processes(
        data,
        [
            (["bank", "update", "support", "--type", "general", "--max-turns", "9"], None),
            (["bank", "show", "no-such-bank", "--json"], None),
            (["bank", "create", "--name", "bad", "--type", "general", "--mode", "turbo"], None),
        ],
    )
    retype.failed(2, "type")
    unknown.failed(3, "no-such-bank")
    bad_mode.failed(2, "turbo", *modes())
    here(data, "bank", "update", "support").failed(2, "nothing to update")
    here(data, "bank", "update", "support", "--mode", "fast").failed(2, "mode")
    here(data, "bank", "update", "support", "--type", "bogus").failed(2, "type")
    here(data, "bank", "update", "support", "--max-tokens", "-3").failed(2, "negative")
    here(data, "bank", "create", "--name", "bad", "--template", "nope").failed(
        2, "nope", *templates()
    )
    here(data, "bank", "create", "--name", "support", "--type", "general").failed(2, "support")
    here(data, "bank", "delete", "no-such-bank").failed(3, "no-such-bank")

    listed = here(data, "bank", "list", "--type", "conversation", "--json").json()
    assert [b["name"] for b in listed] == ["support"]
    assert [b["name"] for b in here(data, "bank", "list", "--json").json()] == [
        "support",
        "prefs",
        "notes",
    ]
    shown = here(data, "bank", "show", prefs["id"], "--json").json()
    assert shown.pop("agents") == [] and shown == prefs  # plus the agents using the bank
    shown = here(data, "bank", "show", "support", "--json").json()
    assert shown.pop("agents") == [] and shown == updated  # nothing changed
    ctx = _local(data)
    assert banks.get(ctx, "support").model_dump(mode="json") == updated
    assert sorted(b.name for b in banks.list_banks(ctx)) == ["notes", "prefs", "support"]

    deleted = here(data, "bank", "delete", "prefs", "--json").json()
    assert deleted["deleted"]["id"] == prefs["id"]
    assert not (data / f"entries_{prefs['id']}.lance").exists()
    assert sorted(b.name for b in banks.list_banks(_local(data))) == ["notes", "support"]
    assert not (tmp_path / ".membank").exists()  # --data was honoured everywhere


@pytest.mark.process
def test_entry_commands(tmp_path: Path) -> None:
    data = tmp_path / "db"
    chat = banks.create(_local(data), BankCreate(name="chat", type="conversation"))

    reply_text = "Sorry about that: the refund is issued, ünïcode and all."
    first = here(
        data,
        *("write", "chat", "--key", "t1", "--speaker", "ann", "--role", "user"),
        *("--tag", "billing", "--tag", "urgent", "--json"),
        "My invoice shows a double charge for March.",
    ).json()
    assert (first["key"], first["speaker"], first["role"]) == ("t1", "ann", "user")
    assert first["tags"] == ["billing", "urgent"]
    assert first["content"] == "My invoice shows a double charge for March."

    second_run, not_utf8, no_speaker = processes(
        data,
        [
            (
                ["write", "chat", "--key", "t1", "--speaker", "agent", "-", "--json"],
                reply_text.encode("utf-8"),
            ),
            (["write", "chat", "--key", "t1", "--speaker", "ann", "-"], b"caf\xe9 \xff\xfe"),
            (["write", "chat", "--key", "t1", "no speaker here"], None),
        ],
    )
    not_utf8.failed(2, "UTF-8")
    no_speaker.failed(2, "speaker")
    second = second_run.json()
    assert (second["content"], second["speaker"]) == (reply_text, "agent")

    hits = here(
        data,
        *("search", "chat", "double charge", "--key", "t1", "--tag", "billing", "-k", "5"),
        "--json",
    ).json()
    assert [h["entry"]["id"] for h in hits] == [first["id"]]  # the tag filter drops the reply
    assert hits[0]["entry"]["content"] == first["content"] and hits[0]["score"] > 0
    both = here(data, "search", "chat", "refund for the double charge", "--json").json()
    assert {h["entry"]["id"] for h in both} == {first["id"], second["id"]}
    assert here(data, "search", "chat", "refund", "--speaker", "nobody", "--json").json() == []
    loaded = here(data, "load", "chat", "--key", "t1", "--json").json()
    assert [e["id"] for e in loaded] == [first["id"], second["id"]]

    here(data, "write", "chat", "--key", "t1", "--speaker", "ann", "   ").failed(2, "empty")
    here(data, "write", "chat", "--key", "t1", "--speaker", "ann", "a\udcffb").failed(2, "UTF-8")
    here(data, "search", "chat", "refund", "--since", "last tuesday").failed(2, "--since")
    here(data, "search", "chat", "refund", "--since", "2999-01-01").failed(2, "in the future")
    here(data, "search", "chat", "refund", "-k", "0").failed(2, "-k")
    here(data, "search", "chat", "   ").failed(2, "empty")
    here(data, "forget", "chat", "no-such-entry").failed(3, "no-such-entry")
    here(data, "load", "no-such-bank", "--key", "t1").failed(3, "no-such-bank")
    here(data, "write", "no-such-bank", "--key", "t1", "--speaker", "a", "hi").failed(3)

    ctx = _local(data)
    assert [e.id for e in entries.load(ctx, chat, "t1")] == [first["id"], second["id"]]
    assert ctx.store.count(chat.id) == 2  # the rejected writes wrote nothing

    forgotten = here(data, "forget", "chat", first["id"], "--json").json()
    assert forgotten == {"forgotten": first["id"]}
    assert [e.id for e in entries.load(_local(data), chat, "t1")] == [second["id"]]

    reset = here(data, "bank", "reset-source", "chat", "--json").json()
    assert reset["reset"]["id"] == chat.id
    ctx = _local(data)
    assert entries.load(ctx, chat, "t1") == []
    assert not ctx.store.has_entries_table(chat.id)
    assert banks.get(ctx, "chat").retention_days == 90  # the config stays
    assert here(data, "load", "chat", "--key", "t1", "--json").json() == []


def test_time_values_out_of_range_are_bad_input(tmp_path: Path) -> None:
    data = tmp_path / "db"
    early, late = "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-01:00"
    here(data, "search", "chat", "q", "--since", early).failed(2, "--since", "out of range")
    here(data, "search", "chat", "q", "--until", late).failed(2, "--until", "out of range")
    here(data, "stats", "chat", "--since", early).failed(2, "--since", "out of range")
    out = str(tmp_path / "x.json")
    here(data, "export", "chat", "--format", "json", "--out", out, "--until", late).failed(
        2, "--until", "out of range"
    )
    assert not data.exists() and not (tmp_path / "x.json").exists()  # nothing written


def test_parse_time_until_a_date_means_the_end_of_that_day() -> None:
    day_end = datetime(2026, 11, 30, tzinfo=UTC)
    assert parse_time("2026-11-29", "--until", whole_day=True) == day_end
    assert parse_time("2026-11-29", "--since") == day_end - timedelta(days=1)
    assert parse_time("2026-11-29T10:00", "--until", whole_day=True) == datetime(
        2026, 11, 29, 10, tzinfo=UTC
    )
    assert parse_time("9999-12-31", "--until", whole_day=True) == datetime.max.replace(tzinfo=UTC)
    with pytest.raises(InvalidInput, match="out of range"):
        parse_time("0001-01-01T00:00:00+05:00", "--since")


def test_number_errors_state_the_real_rule(tmp_path: Path) -> None:
    data = tmp_path / "db"
    create = ("bank", "create", "--name", "x2", "--type", "general")
    for value in ("-3", "0"):
        run = here(data, *create, "--retention-days", value)
        run.failed(2, "--retention-days", "1 or more", "--retention-indefinite")
        assert "0 disables" not in run.err
    for args in (
        ("search", "chat", "food", "-k", "-1"),
        ("search", "chat", "food", "-k", "0"),
        ("stats", "chat", "--days", "-5"),
        ("stats", "chat", "--days", "0"),
        ("stats", "chat", "--top", "-1"),
        ("stats", "chat", "--top", "0"),
    ):
        run = here(data, *args)
        run.failed(2, args[-2], "use 1 or more")
        assert "0 or more" not in run.err and "0 disables" not in run.err
    here(data, *create, "--max-turns", "-1").failed(2, "--max-turns", "0 or more (0 disables)")
    assert not data.exists()


def test_date_only_until_includes_that_whole_day(tmp_path: Path) -> None:
    data = tmp_path / "db"
    ctx = _local(data)
    notes = banks.create(ctx, BankCreate(name="notes", type="general"))
    times = {
        "before": datetime(2026, 11, 28, 23, 59, tzinfo=UTC),
        "during": datetime(2026, 11, 29, 10, 0, tzinfo=UTC),
        "after": datetime(2026, 11, 30, 0, 0, tzinfo=UTC),
    }
    written = entries.write(
        ctx,
        notes,
        [EntryIn(key="k", content=f"vegetarian {n}", created_at=t) for n, t in times.items()],
    )
    ids = {e.content.split()[1]: e.id for e in written}

    def found(*window: str) -> set[str]:
        hits = here(data, "search", "notes", "vegetarian", *window, "--json").json()
        return {name for name, i in ids.items() if i in {h["entry"]["id"] for h in hits}}

    assert found("--until", "2026-11-29") == {"before", "during"}
    assert found("--since", "2026-11-29", "--until", "2026-11-29") == {"during"}
    assert found("--until", "2026-11-29T10:00") == {"before"}  # a date-time stays exclusive
    assert found("--until", "2026-11-29T10:00:00+00:00") == {"before"}
    day = ("--since", "2026-11-29", "--until", "2026-11-29")
    stats = here(data, "stats", "notes", *day, "--json").json()
    assert stats["total_entries"] == 1
    out = tmp_path / "day.json"
    run = here(data, "export", "notes", "--format", "json", "--out", str(out), *day, "--json")
    assert run.json()["entries"] == 1
    reversed_range = ("--since", "2026-11-30", "--until", "2026-11-29")
    for args in (
        ("search", "notes", "vegetarian", *reversed_range),
        ("stats", "notes", *reversed_range),
        ("export", "notes", "--format", "json", "--out", str(tmp_path / "r.json"), *reversed_range),
    ):
        here(data, *args).failed(2, "--since", "--until", "empty")
    assert not (tmp_path / "r.json").exists()


def test_help_says_what_the_readme_promises(tmp_path: Path) -> None:
    data = tmp_path / "db"
    write = here(data, "write", "--help")
    assert write.code == 0 and "stdin" in write.out.split("TEXT", 2)[-1]
    search = " ".join(here(data, "search", "--help").out.split())
    assert "QUERY what to look for; `-` reads it from stdin" in search
    assert "1-1000 (default 10)" in search and "(AND)" in search
    assert "includes that whole day" in search
    for command in ("stats", "export"):
        assert "includes that whole day" in " ".join(here(data, command, "--help").out.split())


@pytest.mark.process
def test_compact_says_why_nothing_was_compacted_and_keeps_the_table_short(
    tmp_path: Path,
) -> None:
    data = tmp_path / "db"
    ctx = _local(data)
    plain = banks.create(ctx, BankCreate(name="plain", type="general"))
    chat = banks.create(
        ctx, BankCreate(name="chat", type="conversation", compaction_prompt="Keep facts.")
    )
    long_turn = " ".join(f"fact{i} is number {i}." for i in range(40))
    for bank in (plain, chat):
        entries.write(
            ctx,
            bank,
            [
                EntryIn(
                    key=f"p{p}",
                    speaker="ann" if bank.type == "conversation" else None,
                    content=f"{long_turn} turn {t} of p{p}",
                )
                for p in range(3)
                for t in range(3)
            ],
        )
    never = here(data, "compact", "plain")
    assert never.code == 0
    assert never.out.strip() == "plain: the bank has no max_tokens/max_turns: it never compacts" + (
        " (set one with `membank bank update`)"
    )
    assert "no max_tokens/max_turns" in here(data, "compact", "plain", "--key", "p1").out
    empty = here(data, "compact", "chat", "--key", "nokey")
    assert (empty.code, empty.out.strip()) == (
        0,
        "chat: no entries under key 'nokey': nothing to compact",
    )
    assert here(data, "load", "chat", "--key", "nokey").code == 0  # the same code as `load`
    assert (
        here(data, "compact", "chat", "--key", "nokey", "--json").json()[0]["entries_before"] == 0
    )
    assert "no partition is over" not in here(data, "compact", "chat").out

    banks.update(ctx, "chat", BankUpdate(max_turns=2))
    done = here(data, "compact", "chat")
    assert done.code == 0
    lines = done.out.splitlines()
    summary_rows = [line for line in lines if line.startswith(("p0 ", "p1 ", "p2 "))]
    assert len(summary_rows) == 6  # three in the result table, three one-line summaries
    assert all(len(line) < 160 for line in lines), done.out
    assert "under_threshold" not in done.out
    loaded = here(data, "load", "chat", "--key", "p0", "--json").json()
    summary = next(e["content"] for e in loaded if e["kind"] == "summary")
    assert len(summary) > 160 and summary not in done.out  # only one line of each is shown


@pytest.mark.process
def test_a_reader_that_goes_away_stops_the_output_quietly(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # like `membank templates | head -0`: every write fails with EPIPE
    try:
        done = subprocess.run(
            [*MEMBANK, "templates"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            check=False,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_damaged_data_file_is_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "db"
    chat = banks.create(_local(data), BankCreate(name="chat", type="conversation"))
    entries.write(_local(data), chat, [EntryIn(key="k", speaker="ann", content="hello there")])
    for lance_file in data.rglob("*.lance"):
        if "_indices" not in lance_file.parts and lance_file.parent.name == "data":
            lance_file.write_bytes(lance_file.read_bytes()[:40])  # truncated on disk
    damaged = here(data, "load", "chat", "--key", "k")
    damaged.failed(1, "failed", "MEMBANK_DEBUG=1")
    monkeypatch.setenv("MEMBANK_DEBUG", "1")
    with pytest.raises((OSError, RuntimeError, ValueError)):
        main(["--data", str(data), "load", "chat", "--key", "k"])


def test_the_console_script_is_the_core_cli_with_the_installed_commands() -> None:
    from importlib.metadata import distribution

    from memory import cli

    (script,) = [p for p in distribution("membank").entry_points if p.name == "membank"]
    assert script.value == "memory.cli:run"
    modules = cli.command_modules()
    assert modules[: len(cli.MODULES)] == cli.MODULES
    helped = cli.build_parser(modules).format_help()
    assert all(f"\n    {name} " in helped for name in ("demo", "serve", "lab", "bank", "write"))


class _Failing:
    """A command module with one command, `fail`, whose handler raises `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def register(self, commands: Any, common: Any) -> None:
        command = commands.add_parser("fail", parents=[common])
        command.set_defaults(handler=self._fail)

    def _fail(self, args: Any) -> int:
        raise self.error


@pytest.mark.parametrize("error", [ValueError("a bug"), RuntimeError("a bug")])
def test_a_bug_shows_its_traceback(error: Exception, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMBANK_DEBUG", raising=False)
    with pytest.raises(type(error), match="a bug"):
        main(["fail"], modules=[_Failing(error)])


def test_an_os_or_engine_error_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa

    monkeypatch.delenv("MEMBANK_DEBUG", raising=False)
    for error in (PermissionError("no access to /x"), pa.ArrowInvalid("bad page")):
        assert main(["fail"], modules=[_Failing(error)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("membank: failed: ") and "MEMBANK_DEBUG=1" in err
        assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "helped"),
    [
        (["bank", "update", "chat", "--template", "persona"], "membank bank update --help"),
        (["search", "chat", "tea", "--bogus"], "membank search --help"),
    ],
)
def test_an_unknown_option_points_at_its_subcommands_help(
    argv: list[str], helped: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("membank: error: unrecognized arguments: ") and err.count("\n") == 1
    assert f"(see `{helped}`)" in err


def test_main_runs_every_command_on_the_context_its_factory_returns(
    ctx: Context, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given: list[str | None] = []

    def factory(data: str | None) -> Context:
        given.append(data)
        return ctx

    bank = banks.create(ctx, BankCreate(name="mine", type="general"))
    entries.write(ctx, bank, [EntryIn(key="k", content="from the factory")])
    assert main(["bank", "list", "--json"], context=factory) == 0
    assert [b["id"] for b in json.loads(capsys.readouterr().out)] == [bank.id]  # account acme
    assert (
        main(["load", "mine", "--key", "k", "--json", "--data", "elsewhere"], context=factory) == 0
    )
    assert [e["content"] for e in json.loads(capsys.readouterr().out)] == ["from the factory"]
    assert given == [None, "elsewhere"]
    assert not (tmp_path / "elsewhere").exists() and not Path("elsewhere").exists()
