"""`membank serve` glue: children's environment, stopping process groups that ignore SIGTERM,
refusing a busy or invalid port, and stopping everything on SIGHUP."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import flows.serve
from flows.cli import main
from flows.serve import RECORD, _group_alive, _listens, child_env, last_message, stop

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


@pytest.fixture
def busy_port() -> Iterator[int]:
    """Yield a port on 127.0.0.1 that a listening socket holds for the test."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_busy_port_is_refused_before_anything_starts(
    busy_port: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = tmp_path / "prefect"
    home.mkdir()
    other = home / RECORD
    other.write_text(json.dumps({"serve": 1, "groups": [2, 3]}))  # the running instance's
    monkeypatch.setenv("PREFECT_HOME", str(home))

    def no_child(*args: object, **kwargs: object) -> None:
        raise AssertionError("serve started a process on a busy port")

    monkeypatch.setattr(flows.serve, "_start", no_child)
    monkeypatch.setattr(flows.serve.subprocess, "run", no_child)
    assert main(["serve", "--port", str(busy_port)]) == 2
    out, err = capsys.readouterr()
    assert err == (
        f"membank: error: port {busy_port} is already in use (another membank serve?): "
        "choose another --port\n"
    )
    assert "ready" not in out
    assert sorted(p.name for p in home.iterdir()) == [RECORD]
    assert json.loads(other.read_text()) == {"serve": 1, "groups": [2, 3]}


def test_a_prefect_home_in_use_by_a_live_serve_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "prefect"
    home.mkdir()
    record = home / RECORD
    monkeypatch.setenv("PREFECT_HOME", str(home))

    def no_child(*args: object, **kwargs: object) -> None:
        raise AssertionError("serve started a process on a home in use")

    monkeypatch.setattr(flows.serve, "_start", no_child)
    monkeypatch.setattr(flows.serve.subprocess, "run", no_child)
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as other:
        try:
            record.write_text(json.dumps({"serve": other.pid, "groups": [other.pid]}))
            assert main(["serve", "--port", str(_free_port())]) == 2
        finally:
            other.kill()
    err = capsys.readouterr().err
    assert f"another membank serve (pid {other.pid}) uses PREFECT_HOME" in err
    assert json.loads(record.read_text())["serve"] == other.pid  # left as it was


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        *(("--port", port, "use 1-65535") for port in ["70000", "0", "99999999999"]),
        *(
            ("--pool", pool, "is not a work pool name")
            for pool in ["", "  ", "a/b", "x<y", "two\nlines"]
        ),
    ],
)
def test_a_bad_port_or_pool_is_a_usage_error_before_anything_starts(
    option: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["serve", option, value])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1


def test_last_message_joins_a_wrapped_error_and_keeps_a_tracebacks_exception(
    tmp_path: Path,
) -> None:
    log = tmp_path / "server.log"
    log.write_text('an earlier run\n\nTraceback (most recent call last):\n  File "x"\nOops: old\n')
    since = log.stat().st_size
    with log.open("a") as f:
        f.write("Port 4318 is already in use. Please specify a different port with the `--port` \n")
        f.write("flag.\n")
    assert last_message(log, since) == (
        "Port 4318 is already in use. Please specify a different port with the `--port` flag."
    )
    assert last_message(log, since, limit=10) == "Port 4318…"
    assert last_message(log, log.stat().st_size) == ""
    traceback_only = tmp_path / "traceback.log"
    traceback_only.write_text(
        'Traceback (most recent call last):\n  File "x"\n    x()\nOops: old\nServer stopped!\n'
    )
    assert last_message(traceback_only) == "Oops: old"


def test_listens_tells_our_listener_from_another_process(busy_port: int) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
    )
    try:
        assert _listens(os.getpgid(0), busy_port) in (True, None)  # this test holds the socket
        assert _listens(process.pid, busy_port) in (False, None)
    finally:
        stop(process, grace=2.0)


SERVE_WITH_FAKE_SERVICES = """
import subprocess, sys, time
from pathlib import Path

import flows.serve


def services(children, env, settings, project, server_log):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                             start_new_session=True)
    children.append(child)
    flows.serve._record(Path(env["PREFECT_HOME"]), children)
    print("ready", child.pid, flush=True)
    while True:
        time.sleep(0.1)


flows.serve._services = services
sys.exit(flows.serve.serve(port=int(sys.argv[1]), project=Path(sys.argv[2])))
"""


@pytest.mark.parametrize("terminal_gone", [False, True])
def test_sighup_stops_every_child_and_removes_the_record(
    terminal_gone: bool, tmp_path: Path
) -> None:
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    repo = Path(flows.serve.__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(repo), env.get("PYTHONPATH", "")])
    serve = subprocess.Popen(
        [sys.executable, "-c", SERVE_WITH_FAKE_SERVICES, str(_free_port()), str(tmp_path)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        assert serve.stdout is not None
        word, pid = serve.stdout.readline().split()
        assert word == "ready" and (tmp_path / "prefect" / RECORD).exists()
        if terminal_gone:  # writing "stopping" then fails, and must not skip the cleanup
            serve.stdout.close()
        serve.send_signal(signal.SIGHUP)
        code = serve.wait(timeout=60)
        assert not _group_alive(int(pid)), "a child outlived membank serve"
        assert not (tmp_path / "prefect" / RECORD).exists()
        if not terminal_gone:
            assert code == 0
            assert serve.stdout.read().splitlines() == [
                "membank serve: stopping",
                "membank serve: stopped",
            ]
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGKILL)
