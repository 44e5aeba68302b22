"""`membank compact` and `membank retention`: JSON output, exit codes, the litellm path."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from compaction_support import make_bank, run, user_write, write_turns

from memory import entries
from memory.context import Context
from memory.models import EntryIn


def test_compact_now_through_litellm_offline_model(data: str, local: Context) -> None:
    bank = make_bank(local, max_turns=6)
    write_turns(local, bank, "k", 9)
    write_turns(local, bank, "small", 2)
    code, out, _ = run("compact", "chat", "--data", data, "--json")
    assert code == 0
    (result,) = json.loads(out)
    assert (result["key"], result["status"], result["covered"]) == ("k", "compacted", 7)
    assert "extractive" in result["summarizer"]
    assert result["summary"].startswith("[extractive summary]")
    thread = entries.load(local, bank, "k")
    assert [e.kind for e in thread] == ["summary", "entry", "entry"]

    code, out, _ = run("compact", "chat", "--key", "small", "--data", data)
    assert code == 0 and "under_threshold" in out


def test_compact_explains_an_irreducible_partition(data: str, local: Context) -> None:
    bank = make_bank(local, max_tokens=5)
    write_turns(local, bank, "k", 1)  # one turn over max_tokens on its own
    code, out, _ = run("compact", "chat", "--data", data)
    assert code == 0
    assert "irreducible" in out and "newest entry (always kept verbatim)" in out
    assert len(entries.load(local, bank, "k")) == 1


def test_compact_counts_the_entries_an_irreducible_partition_keeps(
    data: str, local: Context
) -> None:
    bank = make_bank(local, type="general", max_tokens=100)
    user_write(local, bank, [EntryIn(key="k", content="small note about 42 apples")])
    huge = " ".join(f"word{n}" for n in range(200))
    user_write(local, bank, [EntryIn(key="k", content=huge)])  # inline: summary + huge
    assert [e.kind for e in entries.load(local, bank, "k")] == ["summary", "entry"]
    code, out, _ = run("compact", "chat", "--data", data, "--json")
    (result,) = json.loads(out)
    assert (result["status"], result["covered"], result["kept"]) == ("irreducible", 0, 2)
    assert code == 0 and result["entries_after"] == 2
    code, out, _ = run("compact", "chat", "--data", data)
    assert code == 0
    header, _, row = out.splitlines()[:3]
    assert header.split()[-4:] == ["covered", "kept", "recovered", "error"]
    assert row.split()[:2] == ["k", "irreducible"] and row.split()[-3:] == ["0", "2", "0"]


def test_failed_summary_exits_1_and_keeps_entries(
    data: str, local: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMBANK_LLM_MODEL", "openai/gpt-4o-mini")  # real: blocked in tests
    bank = make_bank(local, max_turns=2)
    write_turns(local, bank, "k", 3)
    code, out, err = run("compact", "chat", "--data", data)
    assert code == 1
    assert "failed, entries kept" in err and "blocked" in err
    assert len(entries.load(local, bank, "k")) == 3
    assert "failed" in out


def test_retention_cli(data: str, local: Context) -> None:
    short = make_bank(local, "short", retention_days=3)
    make_bank(local, "forever", type="general", retention_days=None)
    old = datetime.now(UTC) - timedelta(days=4)
    entries.write(local, short, [EntryIn(key="k", speaker="s", content="old", created_at=old)])
    code, out, _ = run("retention", "short", "--data", data, "--json")
    assert code == 0
    (result,) = json.loads(out)
    assert (result["bank_name"], result["status"], result["deleted"]) == ("short", "deleted", 1)
    code, out, _ = run("retention", "--all", "--data", data, "--json")
    statuses: dict[str, Any] = {r["bank_name"]: r["status"] for r in json.loads(out)}
    assert statuses == {"short": "nothing_expired", "forever": "indefinite"}
    code, out, _ = run("retention", "--all", "--data", data)
    assert "indefinite" in out and "3 days" in out


def test_retention_cli_errors(data: str, local: Context) -> None:
    with pytest.raises(SystemExit) as exited:
        run("retention", "--data", data)
    assert exited.value.code == 2
    code, _, err = run("retention", "nope", "--data", data)
    assert code == 3 and "nope" in err
