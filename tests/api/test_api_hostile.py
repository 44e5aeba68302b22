"""The API against a hostile client (issue 21): poison input is refused before anything is
written, authentication comes before body parsing, one key per request, no server paths in
errors, a request that cannot succeed is a 4xx at once, ETag / If-Match, and a 429 that says
when to come back."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from api_support import Api, client, serve

from memory import banks, entries
from memory.accounts import create_key
from memory.api.app import create_app
from memory.api.state import ApiLimits
from memory.clock import FixedClock
from memory.context import Context
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder
from memory.types.fields import MAX_JSON_BYTES

JSON = {"Content-Type": "application/json"}


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def _bank(api: Api, kind: str = "general") -> str:
    with api.as_acme() as http:
        made = http.post("/memory_banks", json={"name": f"b-{kind}", "type": kind})
    assert made.status_code == 201, made.text
    bank: str = made.json()["id"]
    return bank


@pytest.mark.parametrize(
    "metadata",
    [_nested(256), _nested(300), {"blob": "x" * (MAX_JSON_BYTES + 1)}],
    ids=["256-deep", "300-deep", "over-size"],
)
def test_metadata_that_could_not_be_read_back_is_400_and_nothing_is_stored(
    api: Api, metadata: dict[str, Any]
) -> None:
    bank = _bank(api)
    with api.as_acme() as http:
        wrote = http.post(
            f"/memory_banks/{bank}/entries", json={"key": "k", "content": "c", "metadata": metadata}
        )
        thread = http.get(f"/memory_banks/{bank}/entries", params={"key": "k"})
        found = http.post(f"/memory_banks/{bank}/search", json={"text": "c"})
    assert wrote.status_code == 400, wrote.text[:300]
    assert thread.status_code == 200 and thread.json()["total"] == 0
    assert found.status_code == 200 and found.json()["data"] == []


def test_nan_and_infinity_in_metadata_are_400(api: Api) -> None:
    bank = _bank(api)
    with api.as_acme() as http:
        for literal in ("NaN", "Infinity", "-Infinity", "1e400"):
            body = f'{{"key": "k", "content": "c", "metadata": {{"x": {literal}}}}}'
            wrote = http.post(f"/memory_banks/{bank}/entries", content=body, headers=JSON)
            assert wrote.status_code == 400, (literal, wrote.text)
            assert "NaN or Infinity" in wrote.json()["error"]["message"]
    assert entries.load(api.ctx("acme"), banks.get(api.ctx("acme"), bank), key="k") == []


def test_a_lone_surrogate_in_search_text_is_400_not_500(api: Api) -> None:
    bank = _bank(api)
    with api.as_acme() as http:
        found = http.post(
            f"/memory_banks/{bank}/search", content='{"text": "a \\ud800 b"}', headers=JSON
        )
    assert found.status_code == 400, found.text
    assert "UTF-8" in found.json()["error"]["message"]


def test_malformed_json_without_a_key_is_401_before_the_body_is_read(api: Api) -> None:
    with client(api.url, None) as http:
        broken = http.post("/memory_banks", content="{not json", headers=JSON)
        bad_shape = http.post("/memory_banks", json={"name": 5})
        bad_query = http.get("/memory_banks", params={"limit": "many"})
    with client(api.url, "mbk_nope") as http:
        wrong_key = http.post("/memory_banks", content="{not json", headers=JSON)
    for answer in (broken, bad_shape, bad_query, wrong_key):
        assert answer.status_code == 401, answer.text
        assert answer.json()["error"]["code"] == "unauthorized"
    with api.as_acme() as http:  # with a key, the body's problem is told
        assert http.post("/memory_banks", content="{", headers=JSON).status_code == 422


def test_two_api_key_headers_are_refused(api: Api) -> None:
    with client(api.url, None) as http:
        for pair in ((api.acme_key, api.beta_key), (api.acme_key, api.acme_key)):
            answer = http.get("/memory_banks", headers=[("X-API-Key", k) for k in pair])
            assert answer.status_code == 400, answer.text
            assert "one X-API-Key" in answer.json()["error"]["message"]


def test_a_bad_mode_error_shows_no_server_path(
    api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "secret-configs"
    folder.mkdir()
    monkeypatch.setenv("MEMBANK_CONFIG_DIR", str(folder))
    with api.as_acme() as http:
        made = http.post("/memory_banks", json={"name": "m", "type": "general", "mode": "nope"})
    assert made.status_code == 400, made.text
    message = made.json()["error"]["message"]
    assert "unknown mode 'nope'" in message
    assert str(tmp_path) not in message and "secret-configs" not in message


def test_test_compaction_on_an_empty_bank_is_400_at_once_not_a_job(api: Api) -> None:
    bank = _bank(api, "conversation")
    with api.as_acme() as http:
        answer = http.post(
            f"/memory_banks/{bank}/test-compaction", json={"compaction_prompt": "Sum it up."}
        )
    assert answer.status_code == 400, answer.text
    assert "entries" in answer.json()["error"]["message"]


def test_banks_and_entries_carry_an_etag_and_if_match_is_honoured(api: Api) -> None:
    bank = _bank(api)
    with api.as_acme() as http:
        shown = http.get(f"/memory_banks/{bank}")
        etag = shown.headers["ETag"]
        stale = http.put(
            f"/memory_banks/{bank}", json={"description": "x"}, headers={"If-Match": '"nope"'}
        )
        assert stale.status_code == 412, stale.text
        assert http.get(f"/memory_banks/{bank}").json()["description"] == ""
        fresh = http.put(
            f"/memory_banks/{bank}", json={"description": "y"}, headers={"If-Match": etag}
        )
        assert fresh.status_code == 200 and fresh.headers["ETag"] != etag
        again = http.put(
            f"/memory_banks/{bank}", json={"description": "z"}, headers={"If-Match": etag}
        )
        assert again.status_code == 412  # the ETag moved with the update
        entry = http.post(f"/memory_banks/{bank}/entries", json={"key": "k", "content": "c"})
        entry_id = entry.json()["id"]
        got = http.get(f"/memory_banks/{bank}/entries/{entry_id}")
        assert got.headers["ETag"] == entry.headers["ETag"]
        refused = http.delete(
            f"/memory_banks/{bank}/entries/{entry_id}", headers={"If-Match": '"other"'}
        )
        assert refused.status_code == 412
        assert http.get(f"/memory_banks/{bank}/entries/{entry_id}").status_code == 200
        gone = http.delete(
            f"/memory_banks/{bank}/entries/{entry_id}", headers={"If-Match": got.headers["ETag"]}
        )
        assert gone.status_code == 200
        deleted = http.delete(f"/memory_banks/{bank}", headers={"If-Match": '"other"'})
        assert deleted.status_code == 412
        assert http.get(f"/memory_banks/{bank}").status_code == 200


def test_too_many_jobs_is_429_with_retry_after(tmp_path: Path, clock: FixedClock) -> None:
    base = Context(
        store=LanceStore(str(tmp_path / "db")),
        account="unused",
        clock=clock,
        embedder=hashing_embedder,
    )
    made = create_key(base, "acme")
    limits = ApiLimits(workers=1, max_pending=1, job_retry_after=7)
    app = create_app(base, limits=limits, exports_dir=tmp_path / "exports")
    release = threading.Event()
    with serve(app) as running:
        app.state.membank.jobs.submit("acme", "compact", lambda _: release.wait(30))
        try:
            with client(running.url, made.key) as http:
                bank = http.post("/memory_banks", json={"name": "g", "type": "general"})
                answer = http.post(f"/memory_banks/{bank.json()['id']}/compact")
        finally:
            release.set()
    assert answer.status_code == 429, answer.text
    assert answer.headers["Retry-After"] == "7"
    assert json.loads(answer.text)["error"]["code"] == "too_many_requests"
