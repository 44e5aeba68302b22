"""Keys and tenancy: no key, a wrong or a revoked key is 401 everywhere; account B gets a 404
for everything of account A, exactly as for things that do not exist, and A's data is
unchanged afterwards."""

from __future__ import annotations

import httpx
from api_support import Api, client, wait_job

from memory import banks, entries
from memory.accounts import revoke_key
from memory.agents import longterm
from memory.models import Entry

MISSING = "0" * 32


def _setup_acme(api: Api) -> tuple[str, str, str, str]:
    """A bank of acme's with two entries, a finished export and a finished compaction job."""
    with api.as_acme() as http:
        bank = http.post(
            "/memory_banks", json={"name": "secret", "type": "conversation", "max_turns": 50}
        ).json()["id"]
        entry = http.post(
            f"/memory_banks/{bank}/entries",
            json={"key": "c1", "speaker": "Dana", "content": "the vault code is 4411"},
        ).json()["id"]
        http.post(
            f"/memory_banks/{bank}/entries",
            json={"key": "c1", "speaker": "Ops", "content": "noted"},
        )
        made = http.post(
            "/authenticated/resource-exports",
            json={"resource_type": "memory_bank", "resource_id": bank},
        ).json()
        assert wait_job(http, made["status_url"])["status"] == "succeeded"
        job = http.post(f"/memory_banks/{bank}/compact").json()
        assert wait_job(http, job["status_url"])["status"] == "succeeded"
    return bank, entry, made["id"], job["id"]


def _calls(bank: str, entry: str, export: str, job: str) -> list[tuple[str, str, dict]]:  # type: ignore[type-arg]
    """Every endpoint touching one of acme's things (method, path, JSON body)."""
    return [
        ("GET", f"/memory_banks/{bank}", {}),
        ("PUT", f"/memory_banks/{bank}", {"name": "pwned", "retention_days": 1}),
        ("DELETE", f"/memory_banks/{bank}/source", {}),
        ("GET", f"/memory_banks/{bank}/agents", {}),
        ("GET", f"/memory_banks/{bank}/stats", {}),
        ("POST", f"/memory_banks/{bank}/entries", {"key": "c1", "speaker": "X", "content": "x"}),
        ("POST", f"/memory_banks/{bank}/search", {"text": "vault code"}),
        ("GET", f"/memory_banks/{bank}/entries?key=c1", {}),
        ("GET", f"/memory_banks/{bank}/entries/{entry}", {}),
        ("DELETE", f"/memory_banks/{bank}/entries/{entry}", {}),
        ("POST", f"/memory_banks/{bank}/compact", {}),
        ("POST", f"/memory_banks/{bank}/test-compaction", {"compaction_prompt": "All of it."}),
        (
            "POST",
            "/authenticated/resource-exports",
            {"resource_type": "memory_bank", "resource_id": bank},
        ),
        (
            "POST",
            "/authenticated/resource-exports/estimate",
            {"resource_type": "memory_bank", "resource_id": bank},
        ),
        ("GET", f"/authenticated/resource-exports/{export}", {}),
        ("GET", f"/authenticated/resource-exports/{export}/download", {}),
        ("GET", f"/jobs/{job}", {}),
        ("DELETE", f"/memory_banks/{bank}", {}),
    ]


def _send(http: httpx.Client, method: str, path: str, body: dict) -> httpx.Response:  # type: ignore[type-arg]
    return http.request(method, path, json=body if method in ("POST", "PUT") else None)


def _snapshot(api: Api, bank: str) -> tuple[object, list[Entry], int]:
    ctx = api.ctx("acme")
    stored = banks.get(ctx, bank)
    return stored, entries.read(ctx, stored), ctx.store.version_count(bank)


def test_account_b_gets_404_for_everything_of_account_a(api: Api) -> None:
    bank, entry, export, job = _setup_acme(api)
    before = _snapshot(api, bank)
    with api.as_beta() as http:
        for method, path, body in _calls(bank, entry, export, job):
            response = _send(http, method, path, body)
            assert response.status_code == 404, (method, path, response.text)
            assert "4411" not in response.text and "secret" not in response.text
            twin = _send(http, method, path.replace(bank, MISSING).replace(entry, MISSING), body)
            assert twin.status_code == 404
            if path.startswith("/memory_banks"):  # same answer as for no such bank
                assert response.json() == {
                    "error": {
                        **twin.json()["error"],
                        "message": twin.json()["error"]["message"].replace(MISSING, bank),
                    }
                }
        listed = http.get("/memory_banks").json()
        assert listed["data"] == [] and listed["total"] == 0
    assert _snapshot(api, bank) == before


def test_no_key_or_a_wrong_key_is_401_everywhere(api: Api) -> None:
    bank, entry, export, job = _setup_acme(api)
    before = _snapshot(api, bank)
    calls = [*_calls(bank, entry, export, job), ("GET", "/memory_banks", {})]
    calls.append(("POST", "/memory_banks", {"name": "n", "type": "general"}))
    tampered = api.acme_key[:-2] + ("AA" if not api.acme_key.endswith("AA") else "BB")
    for key in (None, "", "wrong", tampered, api.acme_key + "x"):
        with client(api.url, key) as http:
            for method, path, body in calls:
                response = _send(http, method, path, body)
                assert response.status_code == 401, (key, method, path)
                assert response.json()["error"]["code"] == "unauthorized"
    assert _snapshot(api, bank) == before
    assert [b.id for b in banks.list_banks(api.ctx("acme"))] == [bank]


def test_a_revoked_key_is_401_at_once(api: Api) -> None:
    with api.as_acme() as http:
        assert http.get("/memory_banks").status_code == 200
        revoke_key(api.base, api.acme_key_id)
        response = http.get("/memory_banks")
    assert response.status_code == 401
    assert "revoked" in response.json()["error"]["message"]
    with api.as_beta() as http:
        assert http.get("/memory_banks").status_code == 200


def test_account_b_cannot_reach_account_a_users_memories(api: Api) -> None:
    with api.as_acme() as http:
        memory = http.post("/users/u1/memories", json={"content": "the vault code is 4411"}).json()
        bank = http.post("/memory_banks", json={"name": "secret", "type": "general"}).json()["id"]
        proposal = http.post(
            "/memory_banks/generate_memory_bank_config", json={"description": "facts"}
        ).json()
    ctx = api.ctx("acme")
    before = (longterm.memories(ctx, user="u1"), banks.get(ctx, bank))
    with api.as_beta() as http:
        recalled = http.post("/users/u1/memories/recall", json={"query": "vault code"}).json()
        listed = http.get("/users/u1/memories").json()
        forget = http.delete(f"/users/u1/memories/{memory['id']}")
        wiped = http.delete("/users/u1").json()
        ended = http.post(
            "/users/u1/conversations/end", json={"agent": "a", "conversation": "c"}
        ).json()
        config = http.post(
            f"/memory_banks/{bank}/generate_memory_bank_config", json={"description": "facts"}
        )
        accept = http.post(
            f"/memory_banks/{bank}/generate_memory_bank_config/accept",
            json={"proposal": proposal},
        )
        poll = http.get(ended["status_url"])
    assert recalled["data"] == [] and listed["data"] == []
    assert forget.status_code == 404
    assert sum(t["rows_removed"] for t in wiped["tables"]) == 0
    assert config.status_code == accept.status_code == 404
    assert poll.status_code == 200  # beta's own job
    with api.as_acme() as http:
        assert http.get(ended["status_url"]).status_code == 404  # ...and only beta's
    assert (longterm.memories(ctx, user="u1"), banks.get(ctx, bank)) == before


def test_a_missing_bank_is_told_without_the_storage_location(api: Api) -> None:
    with api.as_beta() as http:
        for method, path in [("GET", "/memory_banks/nope"), ("PUT", "/memory_banks/nope")]:
            response = http.request(method, path, json={"description": "x"})
            assert response.status_code == 404
            message = response.json()["error"]["message"]
            assert message.startswith("no bank 'nope' in this account")
            assert api.base.store.location not in message


def test_keys_audit_and_scoped_keys_stay_in_their_account(api: Api) -> None:
    bank, entry, export, job = _setup_acme(api)
    with api.as_acme() as http:
        limited = http.post("/keys", json={"scopes": ["read", "write"], "banks": [bank]}).json()
        reader = http.post("/keys", json={"scopes": ["read"]}).json()
    before = _snapshot(api, bank)
    acme_key_ids = {api.acme_key_id, limited["key_id"], reader["key_id"]}
    with api.as_beta() as http:
        keys = http.get("/keys").json()["data"]
        log = http.get("/audit").json()["data"]
        revokes = [http.delete(f"/keys/{k}") for k in acme_key_ids]
        limited_to_theirs = http.post("/keys", json={"banks": [bank]})
    assert acme_key_ids.isdisjoint({k["key_id"] for k in keys})
    assert log == []  # beta's own log: empty; nothing of acme's
    assert {r.status_code for r in revokes} == {404}
    assert limited_to_theirs.status_code == 404  # acme's bank does not exist for beta
    with api.as_beta() as http:
        theirs = http.post("/memory_banks", json={"name": "b", "type": "general"}).json()["id"]
    for key in (limited["key"], reader["key"]):  # acme's scoped keys: beta's bank is a 404
        with client(api.url, key) as http:
            for method, path, body in _calls(theirs, entry, export, job)[:9]:
                response = _send(http, method, path, body)
                assert response.status_code in (403, 404), (method, path, response.text)
                if response.status_code == 403:  # a read key's change: refused before lookup
                    assert key == reader["key"] and method != "GET"
            assert http.get("/audit").status_code == 403
    with api.as_acme() as http:
        acme_log = http.get("/audit", params={"limit": 1000}).json()["data"]
    assert {e["account"] for e in acme_log} == {"acme"}
    tried = [e for e in acme_log if theirs in e["target"]]  # acme's own attempts, refused
    assert tried and {e["status"] for e in tried} <= {403, 404}
    assert _snapshot(api, bank) == before
