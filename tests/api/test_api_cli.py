"""`membank keys create | list | revoke` in process, and `membank api` as a user starts it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from flows.cli import main
from memory.accounts import account_for_key, create_key
from memory.context import Context
from memory.store.lance import LanceStore


def _run(ctx: Context, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), context=lambda data: ctx)
    out, err = capsys.readouterr()
    return code, out, err


def test_keys_create_list_revoke(ctx: Context, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(ctx, capsys, "keys", "create", "--account", "acme")
    key = out.strip()
    assert code == 0 and "shown only this once" in err
    assert account_for_key(LanceStore(ctx.store.uri), key) == "acme"
    code, out, _ = _run(ctx, capsys, "keys", "create", "--account", "beta", "--json")
    beta = json.loads(out)
    code, out, _ = _run(ctx, capsys, "keys", "list", "--json")
    listed = json.loads(out)
    assert {k["account"] for k in listed} == {"acme", "beta"}
    assert key not in out and beta["key"] not in out and all(k["active"] for k in listed)
    code, out, _ = _run(ctx, capsys, "keys", "list", "--account", "beta")
    assert beta["key_id"] in out and "acme" not in out
    code, out, _ = _run(ctx, capsys, "keys", "revoke", beta["key_id"])
    assert code == 0 and "401" in out
    assert account_for_key(LanceStore(ctx.store.uri), beta["key"]) is None


def test_keys_bad_input_exits_2_and_unknown_id_exits_3(
    ctx: Context, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(ctx, capsys, "keys", "create", "--account", " ")
    assert code == 2 and "account" in err
    code, _, err = _run(ctx, capsys, "keys", "revoke", "not-an-id")
    assert code == 2 and "12 hex" in err
    code, _, err = _run(ctx, capsys, "keys", "revoke", "0123456789ab")
    assert code == 3
    code, out, _ = _run(ctx, capsys, "keys", "list")
    assert out.strip() == "no API keys"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_membank_api_serves_the_store_it_is_given(tmp_path: Path) -> None:
    data = str(tmp_path / "db")
    membank = str(Path(sys.executable).with_name("membank"))
    env = {**os.environ, "MEMBANK_URI": data}
    key = create_key(LanceStore(data), "acme").key
    port = _free_port()
    server = subprocess.Popen(
        [membank, "api", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                response = httpx.get(f"{url}/memory_banks", headers={"X-API-Key": key})
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
        assert response.status_code == 200 and response.json()["total"] == 0
        assert httpx.get(f"{url}/memory_banks").status_code == 401
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=30)
