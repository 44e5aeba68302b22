"""Per-key request rate limits (issue 21): off by default; when set, a key past its limit
gets a 429 with Retry-After, every keyed answer carries the RateLimit fields, and another
key is not slowed by it; the buckets are shared by every process over the same storage."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from api_support import Api, client, serve

from memory.accounts import create_key
from memory.api.app import create_app
from memory.api.rate_store import SharedBuckets, rate_file
from memory.api.state import ApiLimits
from memory.clock import FixedClock
from memory.context import Context
from memory.settings import Settings
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder


def test_no_limit_by_default(api: Api) -> None:
    with api.as_acme() as http:
        answer = http.get("/memory_banks")
    assert answer.status_code == 200 and "RateLimit-Limit" not in answer.headers
    assert ApiLimits.from_settings(Settings()).rate_limit == 0


def test_a_key_past_its_limit_gets_429_with_retry_after(tmp_path: Path, clock: FixedClock) -> None:
    base = Context(
        store=LanceStore(str(tmp_path / "db")), account="u", clock=clock, embedder=hashing_embedder
    )
    busy = create_key(base, "acme").key
    calm = create_key(base, "beta").key
    limits = ApiLimits(rate_limit=3, rate_window=3600)
    app = create_app(base, limits=limits, exports_dir=tmp_path / "exports")
    with serve(app) as running:
        with client(running.url, busy) as http:
            answers = [http.get("/memory_banks") for _ in range(4)]
        with client(running.url, calm) as http:
            other = http.get("/memory_banks")
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert [a.headers["RateLimit-Remaining"] for a in answers] == ["2", "1", "0", "0"]
    assert {a.headers["RateLimit-Limit"] for a in answers} == {"3"}
    assert answers[0].headers["RateLimit-Policy"] == "3;w=3600"
    refused = answers[3]
    assert int(refused.headers["Retry-After"]) >= 1000  # one token back: 1,200 s at 3/h
    assert refused.json()["error"]["code"] == "too_many_requests"
    assert other.status_code == 200 and other.headers["RateLimit-Remaining"] == "2"


def test_buckets_on_one_file_count_together(tmp_path: Path) -> None:
    """Two connections to one file (as two processes have) share every key's bucket."""
    moment = [1_000_000.0]
    where = tmp_path / "rates.sqlite"
    first = SharedBuckets(where, 3, 60.0, now=lambda: moment[0])
    second = SharedBuckets(where, 3, 60.0, now=lambda: moment[0])
    taken = [b.take("k1") for b in (first, second, first, second)]
    assert [(allowed, left) for allowed, left, _ in taken] == [
        (True, 2),
        (True, 1),
        (True, 0),
        (False, 0),
    ]
    assert taken[3][2] == pytest.approx(20.0)  # one token back at 3 a minute
    assert second.take("k2")[:2] == (True, 2)  # another key has its own bucket
    moment[0] += 20.0
    assert first.take("k1")[:2] == (True, 0)
    moment[0] -= 5.0  # a process whose clock is behind never adds tokens
    assert second.take("k1")[:2] == (False, 0)
    first.close()
    second.close()


def test_rate_file_is_beside_local_storage_else_per_machine(tmp_path: Path) -> None:
    assert rate_file(str(tmp_path / "db")) == tmp_path / "db" / "_api" / "ratelimits.sqlite"
    remote = rate_file("s3://bucket/prefix")
    assert remote.parent == Path(tempfile.gettempdir()) / "membank-ratelimits"
    assert remote != rate_file("s3://bucket/other") and remote == rate_file("s3://bucket/prefix/")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.process
@pytest.mark.server
@pytest.mark.slow
def test_the_limit_holds_across_two_api_processes(tmp_path: Path) -> None:
    """A `membank api` process and this test's own server over one storage folder: a key's 6
    requests a window hold in all, whichever process each reaches (counted apart: 12)."""
    data = str(tmp_path / "db")
    base = Context(store=LanceStore(data), account="u", embedder=hashing_embedder)
    key = create_key(base, "acme").key
    probe = create_key(base, "beta").key  # readiness polls spend another key's bucket
    env = {
        **os.environ,
        "MEMBANK_URI": data,
        "MEMBANK_API_RATE_LIMIT": "6",
        "MEMBANK_API_RATE_WINDOW": "3600",
    }
    membank = str(Path(sys.executable).with_name("membank"))
    port = _free_port()
    child = subprocess.Popen(
        [membank, "api", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    limits = ApiLimits(rate_limit=6, rate_window=3600)
    app = create_app(base, limits=limits, exports_dir=tmp_path / "exports")
    try:
        with serve(app) as here:
            urls = [f"http://127.0.0.1:{port}", here.url]
            _wait_up(urls[0], probe, child)
            answers = [
                httpx.get(f"{urls[i % 2]}/memory_banks", headers={"X-API-Key": key})
                for i in range(10)
            ]
    finally:
        os.killpg(child.pid, signal.SIGINT)
        child.wait(timeout=30)
    assert [a.status_code for a in answers] == [200] * 6 + [429] * 4
    assert [a.headers["RateLimit-Remaining"] for a in answers[:6]] == ["5", "4", "3", "2", "1", "0"]
    assert {a.headers["RateLimit-Policy"] for a in answers} == {"6;w=3600"}
    assert all(int(a.headers["Retry-After"]) >= 500 for a in answers[6:])  # 600 s at 6/h


def _wait_up(url: str, key: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(f"{url}/memory_banks", headers={"X-API-Key": key})
            return
        except httpx.TransportError:
            assert server.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
