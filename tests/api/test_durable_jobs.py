"""Durable jobs (`MEMBANK_JOBS=prefect`): a REST job is a flow run of the `membank-job`
deployments on a real Prefect server, run by a real process worker; it is still pollable,
with its result, after the `membank api` process that started it was stopped and another
started in its place."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from lease_support import prefect_server

from memory.accounts import create_key, revoke_key
from memory.store.lance import LanceStore

pytestmark = [pytest.mark.server, pytest.mark.process, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
BOUND = 600.0
"""A bound on start-ups and the run (a worker's run costs ~8 s of start-up), not a wait."""
POOL = "membank-durable-test"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stop(child: subprocess.Popen[bytes]) -> None:
    """SIGINT the child's process group (Prefect workers ignore SIGTERM), then SIGKILL."""
    for sig, grace in ((signal.SIGINT, 20.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            return
        try:
            child.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def prefect_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A Prefect server with the prefect.yaml deployments on a pool, and a worker of it
    over a fresh store; yields the environment of the API processes."""
    data = str(tmp_path_factory.mktemp("durable") / "db")
    with prefect_server() as url:
        env = {
            **os.environ,
            "PREFECT_API_URL": url,
            "MEMBANK_PROJECT_DIR": str(ROOT),
            "MEMBANK_URI": data,
            "MEMBANK_JOBS": "prefect",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        setup = [sys.executable, "-m", "flows.serve_setup", "--pool", POOL]
        subprocess.run(setup, cwd=ROOT, env=env, check=True, timeout=BOUND, capture_output=True)
        prefect = str(Path(sys.executable).with_name("prefect"))
        worker = subprocess.Popen(
            [prefect, "worker", "start", "--pool", POOL],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            yield env
        finally:
            _stop(worker)


def _api(env: dict[str, str], port: int, key: str) -> subprocess.Popen[bytes]:
    membank = str(Path(sys.executable).with_name("membank"))
    server = subprocess.Popen(
        [membank, "api", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + BOUND
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/memory_banks", headers={"X-API-Key": key})
            return server
        except httpx.TransportError:
            assert server.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)


def test_a_job_started_before_an_api_restart_is_pollable_after_it(
    prefect_env: dict[str, str],
) -> None:
    key = create_key(LanceStore(prefect_env["MEMBANK_URI"]), "acme").key
    other = create_key(LanceStore(prefect_env["MEMBANK_URI"]), "beta").key
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    pasted = "\n".join(
        f"{'Dana' if i % 2 else 'Agent'}: message {i} about ticket 77" for i in range(6)
    )
    body = {
        "compaction_prompt": "Keep ticket numbers.",
        "source": {"kind": "pasted", "text": pasted},
    }
    first = _api(prefect_env, port, key)
    try:
        started = httpx.post(
            f"{url}/memory_banks/test-compaction", json=body, headers={"X-API-Key": key}
        )
    finally:
        _stop(first)
    assert started.status_code == 202, started.text
    job = started.json()
    assert job["status"] == "queued" and job["kind"] == "test-compaction"

    second = _api(prefect_env, port, key)
    try:
        deadline = time.monotonic() + BOUND
        while True:
            polled = httpx.get(f"{url}{job['status_url']}", headers={"X-API-Key": key})
            assert polled.status_code == 200, polled.text
            if polled.json()["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        theirs = httpx.get(f"{url}{job['status_url']}", headers={"X-API-Key": other})
    finally:
        _stop(second)
    done = polled.json()
    assert done["status"] == "succeeded", done
    assert done["id"] == job["id"]
    assert done["result"]["bank"] is None and len(done["result"]["original"]) == 6
    assert theirs.status_code == 404


def test_two_api_workers_share_keys_tenancy_and_revocation(prefect_env: dict[str, str]) -> None:
    store = LanceStore(prefect_env["MEMBANK_URI"])
    acme = create_key(store, "acme")
    beta = create_key(store, "beta").key
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    membank = str(Path(sys.executable).with_name("membank"))
    server = subprocess.Popen(
        [membank, "api", "--port", str(port), "--workers", "2"],
        env=prefect_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_up(server, url, acme.key)
        mine = {"X-API-Key": acme.key}
        made = httpx.post(
            f"{url}/memory_banks", json={"name": "w", "type": "conversation"}, headers=mine
        )
        assert made.status_code == 201, made.text
        bank = made.json()["id"]
        statuses = _mixed_load(url, bank, acme.key)
        assert statuses and all(s < 500 for s in statuses), sorted(set(statuses))
        theirs = {"X-API-Key": beta}
        for _ in range(10):  # fresh connections: both workers answer some
            assert httpx.get(f"{url}/memory_banks/{bank}", headers=theirs).status_code == 404
            found = httpx.post(
                f"{url}/memory_banks/{bank}/search", json={"text": "x"}, headers=theirs
            )
            assert found.status_code == 404
        revoke_key(store, acme.key_id)
        # every request made after the revoke returned is refused, by either worker (each
        # checks the keys table's version per request): no wall-clock bound to race
        answers = [httpx.get(f"{url}/memory_banks", headers=mine).status_code for _ in range(20)]
        assert answers == [401] * 20
    finally:
        _stop(server)


def _wait_up(server: subprocess.Popen[bytes], url: str, key: str) -> None:
    deadline = time.monotonic() + BOUND
    while True:
        try:
            if httpx.get(f"{url}/memory_banks", headers={"X-API-Key": key}).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert server.poll() is None and time.monotonic() < deadline
        time.sleep(0.2)


def _mixed_load(url: str, bank: str, key: str) -> list[int]:
    """Writes, searches, reads and lists from 4 clients at once; returns every status."""
    from concurrent.futures import ThreadPoolExecutor

    def client(n: int) -> list[int]:
        got = []
        with httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=120) as http:
            for i in range(10):
                entry = {"key": f"c{n}", "speaker": "Dana", "content": f"note {n} {i} on tank 7"}
                got.append(http.post(f"/memory_banks/{bank}/entries", json=entry).status_code)
                got.append(
                    http.post(f"/memory_banks/{bank}/search", json={"text": "tank"}).status_code
                )
                got.append(http.get(f"/memory_banks/{bank}").status_code)
                got.append(http.get("/memory_banks").status_code)
        return got

    with ThreadPoolExecutor(4) as pool:
        return [s for part in pool.map(client, range(4)) for s in part]
