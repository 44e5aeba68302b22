"""`membank agents list | show` and the agents `membank bank show` lists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from compaction_support import run

from memory import banks
from memory.agents.registry import Agent, BankRef, define_agent
from memory.config import CONFIG_DIR_ENV
from memory.context import Context
from memory.models import BankCreate


def test_agents_list_and_show(ctx: Context) -> None:
    define_agent(
        ctx, Agent(id="notes", name="Notes", banks=[BankRef(bank="meetings", step="search")])
    )
    code, out, _ = run("agents", "list", context=ctx)
    assert code == 0
    assert "concierge" in out and "working, session, long_term" in out
    assert "notes" in out and "meetings" in out
    code, out, _ = run("agents", "list", "--json", context=ctx)
    listed = {a["id"]: a for a in json.loads(out)}
    assert listed["concierge"]["memory"]["session_memory"] is True
    assert listed["notes"]["source"] == "defined"
    code, out, _ = run("agents", "show", "support-mail", context=ctx)
    assert code == 0 and "{{metadata.email_from}}" in out and "sender auth          required" in out
    code, out, _ = run("agents", "show", "concierge", "--json", context=ctx)
    shown = json.loads(out)
    assert shown["memory"]["types"][0]["config"] == {
        "max_tokens": 4000,
        "compaction_strategy": "summarize",
    }


def test_an_unknown_agent_exits_3(ctx: Context) -> None:
    code, out, err = run("agents", "show", "ghost", context=ctx)
    assert (code, out) == (3, "") and "no agent 'ghost'" in err


def test_a_bad_agent_file_exits_2(
    ctx: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "open.yaml").write_text(
        "email_require_sender_auth: false\nconversation_key: '{{metadata.email_from}}'\n", "utf-8"
    )
    monkeypatch.setenv(CONFIG_DIR_ENV, str(tmp_path))
    code, _, err = run("agents", "list", context=ctx)
    assert code == 2 and "open.yaml" in err and "email_require_sender_auth" in err


def test_bank_show_lists_the_agents_using_it(ctx: Context) -> None:
    banks.create(ctx, BankCreate(name="customer-support", type="conversation"))
    code, out, _ = run("bank", "show", "customer-support", context=ctx)
    assert code == 0 and "agents               support-mail" in out
    code, out, _ = run("bank", "show", "customer-support", "--json", context=ctx)
    assert json.loads(out)["agents"] == [{"id": "support-mail", "name": "Support by e-mail"}]
    banks.create(ctx, BankCreate(name="lonely", type="general"))
    code, out, _ = run("bank", "show", "lonely", "--json", context=ctx)
    assert json.loads(out)["agents"] == []


def test_the_console_script_lists_the_shipped_agents(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("membank")
    env = {**os.environ, "MEMBANK_URI": str(tmp_path / "db")}
    done = subprocess.run(
        [str(script), "agents", "list", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert {"concierge", "support-mail"} <= {a["id"] for a in json.loads(done.stdout)}
