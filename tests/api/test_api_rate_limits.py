"""Per-key request rate limits (issue 21): off by default; when set, a key past its limit
gets a 429 with Retry-After, every keyed answer carries the RateLimit fields, and another
key is not slowed by it."""

from __future__ import annotations

from pathlib import Path

from api_support import Api, client, serve

from memory.accounts import create_key
from memory.api.app import create_app
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
