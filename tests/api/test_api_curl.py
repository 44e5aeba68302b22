"""The seed's curl examples, with only the host and the key replaced, run as `curl`
subprocesses against a real server: each succeeds (curl --fail-with-body from a curlrc)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from api_support import Api, wait_job

from memory import banks, entries
from memory.models import EntryIn

EXAMPLES = Path(__file__).with_name("seed_curl.txt")
SEED_HOST = "https://api.seclai.com"
LAST = ("# Delete a memory bank's content source (reset data)", "# Delete a memory bank")
"""Run after the others (in this order), so every example finds the bank it names."""


def examples() -> list[tuple[str, str]]:
    """Return (comment, command) of each example, in the file's order."""
    found = []
    for block in EXAMPLES.read_text().split("\n\n"):
        lines = block.strip().splitlines()
        if lines and lines[0].startswith("# ") and len(lines) > 1 and lines[1].startswith("curl"):
            found.append((lines[0], "\n".join(lines[1:])))
    return found


def _ordered(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    by_comment = dict(found)
    return [e for e in found if e[0] not in LAST] + [(c, by_comment[c]) for c in LAST]


def _curl(api: Api, command: str, bank_id: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "CURL_HOME": str(home),
        "SECLAI_API_KEY": api.acme_key,
        "MEMORY_BANK_ID": bank_id,
    }
    local = command.replace(SEED_HOST, api.url)
    return subprocess.run(
        ["bash", "-c", local], env=env, capture_output=True, text=True, timeout=60
    )


def test_every_seed_curl_example_succeeds(api: Api, tmp_path: Path) -> None:
    assert shutil.which("curl"), "curl is required (.ci/run installs it)"
    (tmp_path / ".curlrc").write_text("--fail-with-body\n--silent\n--show-error\n")
    found = examples()
    assert len(found) == 10
    bank_id = ""
    outputs: dict[str, str] = {}
    finished: dict[str, dict[str, object]] = {}
    for comment, command in _ordered(found):
        done = _curl(api, command, bank_id, tmp_path)
        assert done.returncode == 0, (comment, done.stdout, done.stderr)
        outputs[comment] = done.stdout
        if comment.startswith("# Create a memory bank"):
            bank_id = json.loads(done.stdout)["id"]
            _write_thread(api, bank_id)  # stats and the compaction test need entries
        if comment.startswith("# Test a compaction prompt against an existing bank"):
            # let the job finish before a later example deletes the bank's entries under it
            with api.as_acme() as http:
                finished[comment] = wait_job(http, json.loads(done.stdout)["status_url"])
    created = json.loads(outputs["# Create a memory bank (with optional description)"])
    assert created["name"] == "My Memory Bank" and created["mode"] == "balanced"
    renamed = json.loads(outputs["# Update a memory bank"])
    assert renamed["name"] == "Renamed Bank"
    assert renamed["compaction_prompt"] == "Summarize concisely"
    stats = json.loads(
        outputs["# Get entry statistics (last 30 days by default, or specify a range)"]
    )
    assert stats["total_entries"] == 4
    assert finished["# Test a compaction prompt against an existing bank"]["status"] == "succeeded"
    assert banks.list_banks(api.ctx("acme")) == []  # the last example deleted it


def _write_thread(api: Api, bank_id: str) -> None:
    ctx = api.ctx("acme")
    turns = [("Dana", "my order 88213 arrived cracked"), ("Ops", "a new one ships today")] * 2
    items = [EntryIn(key="customer-1", speaker=who, content=text) for who, text in turns]
    entries.write(ctx, banks.get(ctx, bank_id), items)
