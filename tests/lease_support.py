"""A real Prefect server for the lease tests, and the entry points of the processes that
hold leases and die.

The server runs as `prefect server start` in its own process group with its own
PREFECT_HOME; its repossessor looks for lapsed leases every second (the lease itself lasts
60 s, the server's floor), so a dead holder's slot frees about a minute after it died.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STARTUP_SECONDS = 600.0
"""A bound, not a wait: a healthy start takes ~15 s, far longer on a loaded machine."""


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def prefect_server() -> Iterator[str]:
    """Run a Prefect server on a free local port; yields its API URL; stops it after."""
    home = Path(tempfile.mkdtemp(prefix="membank-leases-"))
    port = _free_port()
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_UI_ENABLED": "false",
        "PREFECT_SERVER_SERVICES_REPOSSESSOR_LOOP_SECONDS": "1",
    }
    prefect = Path(sys.executable).with_name("prefect")
    command = [str(prefect), "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    log = (home / "server.log").open("w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=log, start_new_session=True)
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _healthy(url):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Prefect server did not start: {home / 'server.log'}")
            time.sleep(0.5)
        yield url
    finally:
        _stop(server)
        log.close()


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


def _stop(server: subprocess.Popen[bytes]) -> None:
    """SIGINT the server's process group (it ignores SIGTERM), then SIGKILL what is left."""
    for sig, grace in ((signal.SIGINT, 20.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(server.pid, sig)
        except ProcessLookupError:
            return
        try:
            server.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


# entry points of spawned processes (light to import; the lease settings come from the
# environment they inherit)


def hold_lock_forever(uri: str, bank_id: str, key: str, ready: str) -> None:
    """Take a partition's lock, say so in the file `ready`, and hold it until killed."""
    from spawned import _cache_bytecode

    _cache_bytecode()
    from memory.store import locks

    with locks.partition_lock(uri, bank_id, key, timeout=None) as held:
        assert held
        Path(ready).write_text("held")
        time.sleep(3600)


def compact_and_die(uri: str, account: str, bank_id: str, key: str, step: str, ready: str) -> None:
    """Compact a partition with a summarizer that repeats no text, and at `step` say so in
    the file `ready` and stop there holding every lock, until killed."""
    from spawned import _cache_bytecode

    _cache_bytecode()
    import compaction_support

    from memory import banks
    from memory.compaction.apply import compact_partition
    from memory.testing import PlainCompleter

    def stop_at(at: str) -> None:
        if at == step:
            Path(ready).write_text(step)
            time.sleep(3600)

    ctx = compaction_support.worker_context(uri, account)
    ctx.completer = PlainCompleter
    compact_partition(ctx, banks.get(ctx, bank_id), key, checkpoint=stop_at)
