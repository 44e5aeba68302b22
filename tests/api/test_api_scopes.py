"""Scoped keys and the key API (issue 21): read, write and admin keys, keys limited to named
banks, `POST/GET/DELETE /keys` for admins; out of scope is a 403 that says why, another
account's things stay a 404, and keys made before scopes are admin keys."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pyarrow as pa
import pytest
from api_support import Api, client

from memory import accounts
from memory.accounts import account_for_key, key_for
from memory.cli import main
from memory.context import Context
from memory.store.lance import LanceStore


def _key(api: Api, **body: object) -> dict:  # type: ignore[type-arg]
    with api.as_acme() as http:
        made = http.post("/keys", json=body)
    assert made.status_code == 201, made.text
    return made.json()  # type: ignore[no-any-return]


def _two_banks(api: Api) -> tuple[str, str]:
    with api.as_acme() as http:
        one = http.post("/memory_banks", json={"name": "one", "type": "general"}).json()["id"]
        two = http.post("/memory_banks", json={"name": "two", "type": "general"}).json()["id"]
    return one, two


def test_a_read_key_reads_and_gets_403_for_changes(api: Api) -> None:
    one, _ = _two_banks(api)
    made = _key(api, scopes=["read"])
    assert made["scopes"] == ["read"] and made["banks"] is None
    with client(api.url, made["key"]) as http:
        assert http.get(f"/memory_banks/{one}").status_code == 200
        assert http.post(f"/memory_banks/{one}/search", json={"text": "x"}).status_code == 200
        wrote = http.post(f"/memory_banks/{one}/entries", json={"key": "k", "content": "c"})
        keys = http.get("/keys")
    assert wrote.status_code == 403
    assert "needs the write scope" in wrote.json()["error"]["message"]
    assert keys.status_code == 403 and "admin" in keys.json()["error"]["message"]


def test_a_write_key_without_read_cannot_read(api: Api) -> None:
    one, _ = _two_banks(api)
    made = _key(api, scopes=["write"])
    with client(api.url, made["key"]) as http:
        wrote = http.post(f"/memory_banks/{one}/entries", json={"key": "k", "content": "c"})
        read = http.get(f"/memory_banks/{one}/entries", params={"key": "k"})
    assert wrote.status_code == 201 and read.status_code == 403


def test_a_key_limited_to_a_bank_sees_and_touches_only_that_bank(api: Api) -> None:
    one, two = _two_banks(api)
    made = _key(api, scopes=["read", "write"], banks=["one"])  # a name: stored as the id
    assert made["banks"] == [one]
    with api.as_beta() as http:
        foreign = http.post("/memory_banks", json={"name": "b", "type": "general"}).json()["id"]
    with client(api.url, made["key"]) as http:
        listed = http.get("/memory_banks").json()["data"]
        mine = http.post(f"/memory_banks/{one}/entries", json={"key": "k", "content": "c"})
        other = http.post(f"/memory_banks/{two}/entries", json={"key": "k", "content": "c"})
        by_name = http.get("/memory_banks/two")
        theirs = http.get(f"/memory_banks/{foreign}")
        created = http.post("/memory_banks", json={"name": "new", "type": "general"})
        export = http.post(
            "/authenticated/resource-exports",
            json={"resource_type": "memory_bank", "resource_id": two},
        )
        users = http.get("/users/dana/memories")
    assert [b["id"] for b in listed] == [one]
    assert mine.status_code == 201
    assert other.status_code == by_name.status_code == 403
    assert "limited to other banks" in other.json()["error"]["message"]
    assert theirs.status_code == 404  # another account's bank: as if missing
    assert created.status_code == export.status_code == users.status_code == 403


def test_admins_list_and_revoke_only_their_accounts_keys(api: Api) -> None:
    made = _key(api, scopes=["read"])
    with api.as_acme() as http:
        listed = http.get("/keys").json()["data"]
    assert {k["key_id"] for k in listed} == {api.acme_key_id, made["key_id"]}
    assert all("key" not in k and "key_hash" not in k for k in listed)
    assert {tuple(k["scopes"]) for k in listed} == {("admin",), ("read",)}
    with api.as_beta() as http:
        theirs = http.get("/keys").json()["data"]
        steal = http.delete(f"/keys/{made['key_id']}")
    assert made["key_id"] not in {k["key_id"] for k in theirs}
    assert steal.status_code == 404
    with client(api.url, made["key"]) as http:
        assert http.get("/memory_banks").status_code == 200
    with api.as_acme() as http:
        revoked = http.delete(f"/keys/{made['key_id']}")
    assert revoked.status_code == 200 and revoked.json()["active"] is False
    with client(api.url, made["key"]) as http:
        assert http.get("/memory_banks").status_code == 401


def test_bad_key_requests_are_4xx(api: Api) -> None:
    with api.as_acme() as http:
        scope = http.post("/keys", json={"scopes": ["root"]})
        empty = http.post("/keys", json={"scopes": []})
        bank = http.post("/keys", json={"banks": ["nope"]})
        key_id = http.delete("/keys/not-an-id")
    assert scope.status_code == empty.status_code == 422
    assert bank.status_code == 404
    assert key_id.status_code == 400


def test_a_key_made_before_scopes_is_an_admin_key(tmp_path: object) -> None:
    store = LanceStore(f"{tmp_path}/db")
    old = pa.schema(
        [
            pa.field("key_id", pa.string(), nullable=False),
            pa.field("account", pa.string(), nullable=False),
            pa.field("key_hash", pa.string(), nullable=False),
            pa.field("created_at", pa.timestamp("us", tz="UTC"), nullable=False),
            pa.field("revoked_at", pa.timestamp("us", tz="UTC")),
        ]
    )
    raw = "mbk_0123456789ab_" + "A" * 43
    row = {
        "key_id": "0123456789ab",
        "account": "acme",
        "key_hash": accounts.hash_key(raw),
        "created_at": datetime(2026, 1, 1, tzinfo=UTC),
        "revoked_at": None,
    }
    store._db.create_table("api_keys", data=pa.Table.from_pylist([row], schema=old))
    fresh = LanceStore(f"{tmp_path}/db")
    found = key_for(fresh, raw)
    assert found is not None and found.scopes == ["admin"] and found.banks is None
    accounts.create_key(fresh, "acme", scopes=["read"])  # the table takes new rows
    assert account_for_key(fresh, raw) == "acme"


def test_the_cli_makes_scoped_and_bank_limited_keys(
    ctx: Context, capsys: pytest.CaptureFixture[str]
) -> None:
    from memory import banks
    from memory.models import BankCreate

    bank = banks.create(ctx, BankCreate(name="notes", type="general"))
    args = ["keys", "create", "--account", "acme", "--scope", "read", "--bank", "notes", "--json"]
    assert main(args, context=lambda _: ctx) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["scopes"], shown["banks"]) == (["read"], [bank.id])
    (made,) = accounts.list_keys(ctx, "acme")
    assert made.scopes == ["read"] and made.banks == [bank.id]
    assert main(["keys", "create", "--account", "acme"], context=lambda _: ctx) == 0
    assert main(["keys", "list"], context=lambda _: ctx) == 0
    assert "admin" in capsys.readouterr().out
