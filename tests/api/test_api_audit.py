"""The audit log (issue 21): every authenticated change is one row (key id, account, action,
target, status, request id, time), never entry text nor a user's id; `GET /audit` for admins
of the account only, paged; `membank audit` shows the same."""

from __future__ import annotations

import json

import pytest
from api_support import Api, client

from memory.cli import main
from memory.context import Context


def _log(api: Api, **params: object) -> dict:  # type: ignore[type-arg]
    with api.as_acme() as http:
        answer = http.get("/audit", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def test_every_change_is_logged_with_who_what_and_no_text(api: Api) -> None:
    with api.as_acme(X_Request_ID="req-1") as http:
        bank = http.post("/memory_banks", json={"name": "g", "type": "general"}).json()["id"]
        entry = http.post(
            f"/memory_banks/{bank}/entries", json={"key": "k", "content": "vault code qzxw"}
        ).json()["id"]
        http.post(f"/memory_banks/{bank}/search", json={"text": "vault"})  # a read: not logged
        http.get(f"/memory_banks/{bank}")
        refused = http.put(f"/memory_banks/{bank}", json={"type": "conversation"})
        http.delete(f"/memory_banks/{bank}/entries/{entry}")
    events = _log(api)["data"]
    assert [e["action"] for e in events] == [
        "DELETE /memory_banks/{bank_id}/entries/{entry_id}",
        "PUT /memory_banks/{bank_id}",
        "POST /memory_banks/{bank_id}/entries",
        "POST /memory_banks",
    ]
    assert {e["key_id"] for e in events} == {api.acme_key_id}
    assert {e["request_id"] for e in events} == {"req-1"}
    assert events[1]["status"] == refused.status_code >= 400
    assert events[2]["target"] == f"bank_id={bank} id={entry}"
    assert events[3]["target"] == f"id={bank}"
    assert "qzxw" not in json.dumps(events) and "vault" not in json.dumps(events)  # not hex


def test_the_log_is_paged_and_for_admins_of_the_account_only(api: Api) -> None:
    with api.as_acme() as http:
        for n in range(3):
            http.post("/memory_banks", json={"name": f"b{n}", "type": "general"})
        reader = http.post("/keys", json={"scopes": ["read", "write"]}).json()["key"]
    first = _log(api, limit=2)
    second = _log(api, limit=2, cursor=first["next_cursor"])
    ids = [e["id"] for e in first["data"] + second["data"]]
    assert len(ids) == len(set(ids)) == 4 and second["next_cursor"] is None
    assert ids == sorted(ids, reverse=True)  # newest first, across pages (ids are time-ordered)
    with client(api.url, reader) as http:
        assert http.get("/audit").status_code == 403
    with api.as_beta() as http:
        theirs = http.get("/audit").json()["data"]
    assert theirs == []  # beta's log holds nothing of acme


def test_a_user_wipe_leaves_no_user_id_in_the_log(api: Api) -> None:
    with api.as_acme() as http:
        made = http.post(
            "/users/dana-smith/memories", json={"content": "Dana likes tea", "type": "preference"}
        )
        assert made.status_code == 201, made.text
        assert http.delete("/users/dana-smith").status_code < 300
    text = json.dumps(_log(api)["data"])
    assert "dana" not in text.lower() and "tea" not in text
    assert text.count("user_id=u_") == 2  # the same digest both times: still traceable


def test_membank_audit_shows_the_log(api: Api, capsys: pytest.CaptureFixture[str]) -> None:
    with api.as_acme() as http:
        http.post("/memory_banks", json={"name": "g", "type": "general"})
    ctx: Context = api.ctx("acme")
    assert main(["audit", "--account", "acme", "--json"], context=lambda _: ctx) == 0
    (event,) = json.loads(capsys.readouterr().out)
    assert event["action"] == "POST /memory_banks" and event["key_id"] == api.acme_key_id
    assert main(["audit", "--account", "acme", "--limit", "0"], context=lambda _: ctx) == 2
