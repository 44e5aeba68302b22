"""A real uvicorn server on 127.0.0.1 in a thread, on a free port, and `Api` (a running
server with a key of each account), for the API tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import uvicorn
from fastapi import FastAPI

from memory.context import Context
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder

START_TIMEOUT = 20.0


@dataclass
class Running:
    """A server that is up: its base URL."""

    url: str


@contextmanager
def serve(app: FastAPI) -> Iterator[Running]:
    """Run `app` under uvicorn on 127.0.0.1 (a port the kernel picks) until the block ends."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # else ~40 ms per request
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield Running(url=f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def client(url: str, key: str | None, **headers: str) -> httpx.Client:
    """Return an httpx client on the server, sending `key` as X-API-Key (None: no key)."""
    sent = {k.replace("_", "-"): v for k, v in headers.items()}
    if key is not None:
        sent["X-API-Key"] = key
    return httpx.Client(base_url=url, headers=sent, timeout=30.0)


def wait_job(http: httpx.Client, status_url: str, timeout: float = 30.0) -> dict:  # type: ignore[type-arg]
    """Poll a job's status URL until it is done (the server waits up to 5 s per poll)."""
    deadline = time.monotonic() + timeout
    while True:
        body = http.get(status_url).json()
        if body["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
            return body  # type: ignore[no-any-return]
        time.sleep(0.05)


@dataclass
class Api:
    """A running API: its URL, the base context, and a key of each account."""

    url: str
    base: Context
    acme_key: str
    acme_key_id: str
    beta_key: str

    def as_acme(self, **headers: str) -> httpx.Client:
        """A client with acme's key (and the current version unless told otherwise)."""
        return client(self.url, self.acme_key, **{"Seclai_Version": "2026-08-03", **headers})

    def as_beta(self, **headers: str) -> httpx.Client:
        """A client with beta's key."""
        return client(self.url, self.beta_key, **{"Seclai_Version": "2026-08-03", **headers})

    def ctx(self, account: str) -> Context:
        """A context on the server's storage for `account` (to set up and to check)."""
        return Context(
            store=LanceStore(self.base.store.uri),
            account=account,
            clock=self.base.clock,
            embedder=hashing_embedder,
        )
