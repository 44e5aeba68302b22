"""`membank serve`: a local Prefect server, the work pool, the deployments and a worker.

Each child runs in its own process group. Ctrl-C (SIGINT), SIGTERM or SIGHUP (terminal
closed) stops them in order, worker first: SIGINT to the group (Prefect workers ignore
SIGTERM), a second SIGINT, then SIGKILL for anything still alive after the grace period. The
process groups are written to `$PREFECT_HOME/membank-serve.json` while running, so a
supervisor can check they are gone. A busy port is refused before anything starts.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import IO

from memory.errors import Conflict, InvalidInput

PROJECT_DIR = Path(__file__).resolve().parent.parent
"""The checkout holding prefect.yaml; flow runs start here."""
HEALTH_TIMEOUT = 180.0
GRACE_SECONDS = 20.0
READY = "membank serve: ready"
"""Printed (and flushed) once the worker is started: scripts wait for this line."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Each stops every child the same way: Ctrl-C, `kill`, and a closed terminal or SSH session."""
RECORD = "membank-serve.json"
SERVER_LOG = "membank-serve-server.log"


class ServeError(RuntimeError):
    """A Prefect service failed to start."""


def _say(text: str) -> None:
    try:
        sys.stdout.write(f"{text}\n")
        sys.stdout.flush()
    except OSError:  # the terminal is gone (SIGHUP): stopping the children matters more
        pass


def check_port_free(host: str, port: int) -> None:
    """Bind and close `host:port` as the Prefect server will, so a busy port is refused early.

    Raises:
        Conflict: something already listens there (another membank serve, or any program).
        InvalidInput: the address cannot be used at all (no such address, privileged port).
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(address)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise Conflict(
                f"port {port} is already in use (another membank serve?): choose another --port"
            ) from exc
        raise InvalidInput(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}: choose another --port"
        ) from exc


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


def wait_healthy(
    url: str,
    server: subprocess.Popen[str],
    timeout: float,
    *,
    log: Path | None = None,
    since: int = 0,
) -> None:
    """Wait until our server child answers the API health check; ServeError if it never does.

    An answer only counts while the child is alive and, where /proc tells, holds the listening
    socket: another server on the same port must not pass for ours.
    """
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise ServeError(_exited("the Prefect server", server, log, since))
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                answered = response.status == 200
        except (urllib.error.URLError, OSError):
            answered = False
        if answered and server.poll() is None and _listens(server.pid, port) is not False:
            return
        time.sleep(0.5)
    raise ServeError(f"the Prefect server did not answer at {url} within {timeout:.0f} s")


def _exited(name: str, child: subprocess.Popen[str], log: Path | None, since: int) -> str:
    """Return why `child` stopped: its exit code and, from its log, its last message."""
    reason = f"{name} exited with code {child.returncode}"
    last = last_message(log, since) if log is not None else ""
    return f"{reason}: {last}" if last else reason


def last_message(log: Path, since: int = 0, limit: int = 300) -> str:
    """Return the last message written to `log` after byte `since`, on one line.

    That is the last lines not indented (rich wraps a CLI error over a few lines): the
    exception of a traceback, the message of a CLI error, or the last log record.
    """
    try:
        with open(log, "rb") as f:
            f.seek(since)
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.rstrip() for line in text.splitlines() if line.strip() != "Server stopped!"]
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        return ""
    tail: list[str] = []
    for line in reversed(lines):
        if not line or line[0].isspace():
            break
        tail.insert(0, line)
    message = " ".join(tail[-3:]) if tail else lines[-1].strip()
    return message if len(message) <= limit else message[: limit - 1] + "…"


def _listens(pgid: int, port: int) -> bool | None:
    """Return whether a process of group `pgid` listens on TCP `port`; None if /proc cannot say."""
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if not tables[0].exists():
        return None
    table = "\n".join(t.read_text() for t in tables if t.exists())
    listening = {
        f"socket:[{fields[9]}]"
        for fields in (line.split() for line in table.splitlines()[1:])
        if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port
    }
    for pid in (int(name) for name in os.listdir("/proc") if name.isdigit()):
        try:
            if os.getpgid(pid) != pgid:
                continue
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") in listening for fd in fds):
                return True
        except OSError:  # the process ended meanwhile, or is not ours to inspect
            continue
    return False


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """Turn SIGTERM and SIGHUP into KeyboardInterrupt, so every stop signal stops the same way."""
    raise KeyboardInterrupt


def _record(home: Path, children: Sequence[subprocess.Popen[str]]) -> Path:
    path = home / RECORD
    path.write_text(json.dumps({"serve": os.getpid(), "groups": [c.pid for c in children]}))
    return path


def check_home_free(home: Path) -> None:
    """Conflict when another live `membank serve` uses this PREFECT_HOME (its record file names
    a running process): two servers on one home would share its database and record."""
    try:
        pid = json.loads((home / RECORD).read_text()).get("serve")
    except (OSError, ValueError, AttributeError):
        return
    if not isinstance(pid, int) or pid == os.getpid():
        return
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return  # a stale record of a serve that died: it is replaced
    except PermissionError:
        pass
    raise Conflict(
        f"another membank serve (pid {pid}) uses PREFECT_HOME {home}: stop it, set another "
        f"PREFECT_HOME, or remove {home / RECORD} if no serve runs"
    )


def _remove_own_record(home: Path) -> None:
    """Delete the record file only if this process wrote it: never another instance's."""
    path = home / RECORD
    try:
        ours = json.loads(path.read_text()).get("serve") == os.getpid()
    except (OSError, ValueError, AttributeError):
        return
    if ours:
        path.unlink(missing_ok=True)


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
    log, since = Path(server_log.name), server_log.tell()
    children.append(_start(server_cmd, env, project, server_log))
    _record(home, children)
    wait_healthy(api_url, children[0], HEALTH_TIMEOUT, log=log, since=since)
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
    if children[0].poll() is not None:
        raise ServeError(_exited("the Prefect server", children[0], log, since))
    raise ServeError(f"the Prefect worker exited with code {children[1].returncode}")


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

    Returns 0 after Ctrl-C, SIGTERM or SIGHUP, 1 when a service fails to start or dies.

    Raises:
        Conflict: the port is already in use, or another serve uses this PREFECT_HOME;
            nothing was started.
        InvalidInput: the address cannot be listened on; nothing was started.
    """
    check_port_free(host, port)
    home = Path(os.environ.get("PREFECT_HOME") or project / ".prefect").resolve()
    check_home_free(home)
    home.mkdir(parents=True, exist_ok=True)
    env = child_env(api_url=f"http://{host}:{port}/api", home=home, data=data, project=project)
    settings = {"host": host, "port": str(port), "pool": pool, "llm_limit": str(llm_limit)}
    children: list[subprocess.Popen[str]] = []
    # Installed even where SIGINT was ignored at start (a `cmd &` in a script).
    previous = {sig: signal.signal(sig, _interrupt) for sig in STOP_SIGNALS}
    try:
        with open(home / SERVER_LOG, "a") as server_log:
            try:
                _services(children, env, settings, project, server_log)
            except KeyboardInterrupt:
                _say("membank serve: stopping")
            except ServeError as exc:
                sys.stderr.write(f"membank: failed: {exc}\n")
                return 1
            finally:
                for sig in STOP_SIGNALS:  # a second signal must not orphan the children
                    signal.signal(sig, signal.SIG_IGN)
                for child in reversed(children):
                    stop(child)
                _remove_own_record(home)
                _say("membank serve: stopped")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
