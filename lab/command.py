"""`membank lab [--port N]`: start the Streamlit lab on 127.0.0.1 (Ctrl-C stops it)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from memory.cli.args import port_number

APP = Path(__file__).resolve().parent / "app.py"


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the lab command."""
    lab = commands.add_parser(
        "lab", parents=[common], help="start the Streamlit lab on 127.0.0.1 (Ctrl-C stops it)"
    )
    lab.add_argument("--port", type=port_number, default=8501, help="port (1-65535)")
    lab.set_defaults(handler=_lab)


def streamlit_command(port: int) -> list[str]:
    """Return the command line that serves the lab on 127.0.0.1:`port`."""
    return [
        sys.executable, "-m", "streamlit", "run", str(APP),
        "--server.headless", "true",
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--browser.gatherUsageStats", "false",
        "--client.toolbarMode", "minimal",
    ]  # fmt: skip


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    """Return whether nothing listens on `host`:`port` now (a bind there succeeds)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is free
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _lab(args: argparse.Namespace) -> int:
    from memory.errors import InvalidInput
    from memory.settings import Settings, checked_uri

    data = checked_uri(args.data, Settings())  # a bad path is exit 2 before anything starts
    if not port_free(args.port):  # before a URL is printed: it would be someone else's server
        raise InvalidInput(
            f"port {args.port} of 127.0.0.1 is in use by another program: choose another "
            "with --port N"
        )
    env = {**os.environ, "MEMBANK_URI": data, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    url = f"http://127.0.0.1:{args.port}"
    if args.json:
        print(json.dumps({"url": url, "storage": data}), flush=True)
    else:
        print(f"membank lab: {url} (storage {data}; Ctrl-C stops it)", flush=True)
    process = subprocess.Popen(streamlit_command(args.port), env=env)
    previous = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops Streamlit too
    try:
        return process.wait()
    except KeyboardInterrupt:
        _stop(process)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
