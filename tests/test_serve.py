"""`membank serve` glue: children's environment, and stopping process groups that ignore SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from flows.serve import _group_alive, child_env, stop

STUBBORN = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print("ready", flush=True)
time.sleep(600)
"""


def test_stop_ends_a_group_that_ignores_sigint_and_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    os.kill(process.pid, signal.SIGTERM)  # ignored, like a Prefect worker
    assert process.poll() is None
    stop(process, grace=1.0)
    assert process.poll() is not None
    assert not _group_alive(process.pid), "a grandchild outlived the stop"


def test_stop_lets_a_cooperative_group_exit_on_sigint() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
    )
    stop(process, grace=30.0)
    assert process.returncode == -signal.SIGINT or process.returncode == 1


def test_child_env_points_flows_at_absolute_storage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMBANK_URI", raising=False)
    env = child_env(api_url="http://127.0.0.1:1/api", home=tmp_path, data=None, project=tmp_path)
    assert env["MEMBANK_URI"] == str(tmp_path / ".membank")
    assert env["PREFECT_API_URL"] == "http://127.0.0.1:1/api"
    assert env["MEMBANK_PROJECT_DIR"] == str(tmp_path)
    remote = child_env(api_url="x", home=tmp_path, data="s3://bucket/db", project=tmp_path)
    assert remote["MEMBANK_URI"] == "s3://bucket/db"
