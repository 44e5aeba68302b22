"""Idempotent writes (issue 21): a retry with the same `Idempotency-Key` gets the first answer
and stores nothing twice, also when the first request timed out on the client."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import pytest
from api_support import Api, client, serve

from memory import banks, entries
from memory.accounts import create_key
from memory.api.app import create_app
from memory.clock import FixedClock
from memory.config import Mode
from memory.context import Context
from memory.ports import Embedder
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder


def _entries(api: Api, bank: str, key: str = "k") -> int:
    ctx = api.ctx("acme")
    return len(entries.load(ctx, banks.get(ctx, bank), key=key))


def test_a_retried_write_with_the_same_key_leaves_exactly_one_entry(api: Api) -> None:
    with api.as_acme() as http:
        bank = http.post("/memory_banks", json={"name": "g", "type": "general"}).json()["id"]
        body = {"key": "k", "content": "pay the invoice"}
        first = http.post(
            f"/memory_banks/{bank}/entries", json=body, headers={"Idempotency-Key": "w-1"}
        )
        again = http.post(
            f"/memory_banks/{bank}/entries", json=body, headers={"Idempotency-Key": "w-1"}
        )
        other = http.post(
            f"/memory_banks/{bank}/entries", json=body, headers={"Idempotency-Key": "w-2"}
        )
        changed = http.post(
            f"/memory_banks/{bank}/entries",
            json={**body, "content": "something else"},
            headers={"Idempotency-Key": "w-1"},
        )
    assert first.status_code == 201 and again.status_code == 201
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    assert other.json()["id"] != first.json()["id"]
    assert changed.status_code == 422 and "another request" in changed.json()["error"]["message"]
    assert _entries(api, bank) == 2  # w-1 once, w-2 once


def test_the_same_key_of_another_account_is_another_request(api: Api) -> None:
    made = {}
    for name, session in (("acme", api.as_acme()), ("beta", api.as_beta())):
        with session as http:
            made[name] = http.post(
                "/memory_banks",
                json={"name": "g", "type": "general"},
                headers={"Idempotency-Key": "same"},
            )
    assert made["acme"].status_code == made["beta"].status_code == 201
    assert made["acme"].json()["account"] == "acme" and made["beta"].json()["account"] == "beta"


def test_a_failed_request_is_not_kept_and_its_retry_runs(api: Api) -> None:
    with api.as_acme() as http:
        refused = http.post(
            "/memory_banks", json={"name": "g", "type": "nope"}, headers={"Idempotency-Key": "b"}
        )
        fixed = http.post(
            "/memory_banks", json={"name": "g", "type": "nope"}, headers={"Idempotency-Key": "b"}
        )
    assert refused.status_code == fixed.status_code == 422
    assert "Idempotent-Replayed" not in fixed.headers


def test_a_forgotten_entry_leaves_no_kept_answer(api: Api) -> None:
    with api.as_acme() as http:
        bank = http.post("/memory_banks", json={"name": "g", "type": "general"}).json()["id"]
        body = {"key": "k", "content": "secret 4411"}
        first = http.post(
            f"/memory_banks/{bank}/entries", json=body, headers={"Idempotency-Key": "f"}
        )
        assert http.delete(f"/memory_banks/{bank}/entries/{first.json()['id']}").status_code == 200
    store = api.base.store
    assert not [r for r in store.idempotency_rows("acme") if b"4411" in (r["body"] or b"")]  # type: ignore[attr-defined]


@dataclass
class _Gate:
    """An embedder that waits until released (a slow write, with no sleep)."""

    release: threading.Event
    entered: threading.Event

    def __call__(self, mode: Mode) -> Embedder:
        inner = hashing_embedder(mode)
        gate = self

        class Gated:
            dims = inner.dims
            name = getattr(inner, "name", "gated")

            def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[type-arg]
                gate.entered.set()
                gate.release.wait(30)
                return inner.embed(texts)

            def __getattr__(self, attr: str) -> object:
                return getattr(inner, attr)

        return Gated()  # type: ignore[return-value]


@pytest.fixture
def slow(tmp_path: Path, clock: FixedClock) -> Iterator[tuple[str, str, Context, _Gate]]:
    gate = _Gate(threading.Event(), threading.Event())
    base = Context(
        store=LanceStore(str(tmp_path / "db")), account="unused", clock=clock, embedder=gate
    )
    key = create_key(base, "acme").key
    app = create_app(base, exports_dir=tmp_path / "exports")
    try:
        with serve(app) as running:
            yield running.url, key, base, gate
    finally:
        gate.release.set()


def test_a_retry_after_a_client_timeout_gets_the_first_answer_and_one_entry(
    slow: tuple[str, str, Context, _Gate],
) -> None:
    url, key, base, gate = slow
    gate.release.set()
    with client(url, key) as http:
        bank = http.post("/memory_banks", json={"name": "g", "type": "general"}).json()["id"]
    gate.release.clear()
    body = {"key": "k", "content": "pay the invoice"}
    headers = {"Idempotency-Key": "slow-1", "X-API-Key": key}
    impatient = httpx.Client(base_url=url, timeout=httpx.Timeout(30.0, read=0.5))
    with impatient, pytest.raises(httpx.TimeoutException):
        impatient.post(f"/memory_banks/{bank}/entries", json=body, headers=headers)
    assert gate.entered.wait(30)  # the first write is running on the server
    answers: list[httpx.Response] = []
    retry = threading.Thread(
        target=lambda: answers.append(
            httpx.post(f"{url}/memory_banks/{bank}/entries", json=body, headers=headers, timeout=60)
        )
    )
    retry.start()
    gate.release.set()
    retry.join(60)
    (answer,) = answers
    assert answer.status_code == 201, answer.text
    ctx = Context(store=base.store, account="acme", clock=base.clock, embedder=hashing_embedder)
    stored = entries.load(ctx, banks.get(ctx, bank), key="k")
    assert [e.id for e in stored] == [answer.json()["id"]]


def test_a_user_wipe_leaves_no_kept_answer_of_the_user(api: Api) -> None:
    with api.as_acme() as http:
        made = http.post(
            "/users/dana-smith/memories",
            json={"content": "Dana likes oolong tea", "type": "preference"},
            headers={"Idempotency-Key": "m-1"},
        )
        assert made.status_code == 201, made.text
        assert http.delete("/users/dana-smith").status_code < 300
    kept = api.base.store.idempotency_rows("acme")  # type: ignore[attr-defined]
    assert not [r for r in kept if b"oolong" in (r["body"] or b"")]


def test_the_same_key_with_another_if_match_is_another_request(api: Api) -> None:
    """A replay must not answer a condition the client did not send: a delete kept under a key
    is not replayed to the same key with another If-Match (422), and nothing runs."""
    with api.as_acme() as http:
        made = http.post("/memory_banks", json={"name": "g", "type": "general"})
        bank, etag = made.json()["id"], made.headers["ETag"]
        path = f"/memory_banks/{bank}"
        first = http.delete(path, headers={"Idempotency-Key": "d-1", "If-Match": etag})
        again = http.delete(path, headers={"Idempotency-Key": "d-1", "If-Match": etag})
        other = http.delete(path, headers={"Idempotency-Key": "d-1", "If-Match": "0" * 201})
        versioned = http.delete(
            path, headers={"Idempotency-Key": "d-1", "Seclai-Version": "2026-01-01"}
        )
    assert first.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert other.status_code == 422 and "If-Match" in other.json()["error"]["message"]
    assert versioned.status_code == 422
