"""`membank serve`: a local Prefect server, the work pool, the deployments and a worker.

Each child runs in its own process group. Ctrl-C (SIGINT) or SIGTERM stops them in order,
worker first: SIGINT to the group (Prefect workers ignore SIGTERM), a second SIGINT, then
SIGKILL for anything still alive after the grace period. The process groups are written to
`$PREFECT_HOME/membank-serve.json` while running, so a supervisor can check they are gone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import IO

PROJECT_DIR = Path(__file__).resolve().parent.parent
"""The checkout holding prefect.yaml; flow runs start here."""
HEALTH_TIMEOUT = 180.0
GRACE_SECONDS = 20.0
READY = "membank serve: ready"
"""Printed (and flushed) once the worker is started: scripts wait for this line."""


class ServeError(RuntimeError):
    """A Prefect service failed to start."""


def _say(text: str) -> None:
    sys.stdout.write(f"{text}\n")
    sys.stdout.flush()


def child_env(*, api_url: str, home: Path, data: str | None, project: Path) -> dict[str, str]:
    """Return the environment of the Prefect children: API, home, storage and project."""
    env = dict(os.environ)
    env.update(
        PREFECT_API_URL=api_url,
        PREFECT_HOME=str(home),
        MEMBANK_PROJECT_DIR=str(project),
    )
    env.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    uri = data or env.get("MEMBANK_URI") or ".membank"
    if "://" not in uri:
        uri = str(Path(uri).resolve())
    env["MEMBANK_URI"] = uri
    return env


def _start(
    command: Sequence[str], env: dict[str, str], cwd: Path, out: IO[str] | None
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        list(command),
        env=env,
        cwd=cwd,
        stdout=out,
        stderr=subprocess.STDOUT if out is not None else None,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )


def stop(process: subprocess.Popen[str], grace: float = GRACE_SECONDS) -> None:
    """Stop a child's whole process group: SIGINT, SIGINT again, then SIGKILL."""
    for sig, wait in ((signal.SIGINT, grace / 2), (signal.SIGINT, grace / 2), (signal.SIGKILL, 5)):
        if process.poll() is not None and not _group_alive(process.pid):
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if process.poll() is not None and not _group_alive(process.pid):
                return
            time.sleep(0.2)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a group we cannot signal is not ours
        return False
    return True


def wait_healthy(url: str, server: subprocess.Popen[str], timeout: float) -> None:
    """Wait until the Prefect API answers its health check; ServeError if it never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise ServeError(f"the Prefect server exited with code {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise ServeError(f"the Prefect server did not answer at {url} within {timeout:.0f} s")


@contextmanager
def _terminate_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM into KeyboardInterrupt for the block, so both stop the same way."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _record(home: Path, children: Sequence[subprocess.Popen[str]]) -> Path:
    path = home / "membank-serve.json"
    path.write_text(json.dumps({"serve": os.getpid(), "groups": [c.pid for c in children]}))
    return path


def _services(
    children: list[subprocess.Popen[str]],
    env: dict[str, str],
    settings: dict[str, str],
    project: Path,
    server_log: IO[str],
) -> None:
    """Start server, deployments and worker into `children`, then watch them until one exits."""
    home, api_url = Path(env["PREFECT_HOME"]), env["PREFECT_API_URL"]
    host, port, pool = settings["host"], settings["port"], settings["pool"]
    prefect = [sys.executable, "-m", "prefect"]
    _say(f"membank serve: Prefect server on {host}:{port} (log {server_log.name})")
    server_cmd = [*prefect, "server", "start", "--host", host, "--port", port]
    children.append(_start(server_cmd, env, project, server_log))
    _record(home, children)
    wait_healthy(api_url, children[0], HEALTH_TIMEOUT)
    _say(f"membank serve: deploying prefect.yaml onto work pool {pool!r}")
    setup = [sys.executable, "-m", "flows.serve_setup", "--pool", pool]
    setup += ["--llm-limit", settings["llm_limit"]]
    done = subprocess.run(
        setup, env=env, cwd=project, capture_output=True, text=True, start_new_session=True
    )
    if done.returncode != 0:
        raise ServeError(f"deploying failed:\n{done.stdout}\n{done.stderr}")
    children.append(_start([*prefect, "worker", "start", "--pool", pool], env, project, None))
    _record(home, children)
    _say(
        f"{READY}: API {api_url}, UI http://{host}:{port}, pool {pool!r}, "
        f"storage {env['MEMBANK_URI']} (Ctrl-C stops everything)"
    )
    while all(child.poll() is None for child in children):
        time.sleep(0.5)
    exited = next(c for c in children if c.poll() is not None)
    raise ServeError(f"a Prefect service exited with code {exited.returncode}")


def serve(
    *,
    port: int = 4200,
    pool: str = "membank",
    llm_limit: int = 2,
    data: str | None = None,
    host: str = "127.0.0.1",
    project: Path = PROJECT_DIR,
) -> int:
    """Run the server, set up pool and deployments, run a worker; returns an exit code.

    Returns 0 after Ctrl-C or SIGTERM, 1 when a service fails to start or dies.
    """
    home = Path(os.environ.get("PREFECT_HOME") or project / ".prefect").resolve()
    home.mkdir(parents=True, exist_ok=True)
    env = child_env(api_url=f"http://{host}:{port}/api", home=home, data=data, project=project)
    settings = {"host": host, "port": str(port), "pool": pool, "llm_limit": str(llm_limit)}
    children: list[subprocess.Popen[str]] = []
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
    with _terminate_on_sigterm(), open(home / "membank-serve-server.log", "a") as server_log:
        try:
            _services(children, env, settings, project, server_log)
        except KeyboardInterrupt:
            _say("membank serve: stopping")
        except ServeError as exc:
            sys.stderr.write(f"membank: failed: {exc}\n")
            return 1
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not orphan them
            for child in reversed(children):
                stop(child)
            (home / "membank-serve.json").unlink(missing_ok=True)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            _say("membank serve: stopped")
    return 0
