"""The bank and entry endpoints over a real uvicorn server: the seed's paths and fields."""

from __future__ import annotations

from api_support import Api

from memory import banks, entries
from memory.models import EntryIn


def _create(api: Api, **fields: object) -> dict:  # type: ignore[type-arg]
    body = {"name": "support", "type": "conversation", "mode": "balanced", **fields}
    with api.as_acme() as http:
        response = http.post("/memory_banks", json=body)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def test_create_get_list_update_delete(api: Api) -> None:
    made = _create(api, description="Stores customer context")
    assert made["description"] == "Stores customer context" and made["mode"] == "balanced"
    stored = banks.get(api.ctx("acme"), made["id"])
    assert stored.name == "support" and stored.type == "conversation"
    with api.as_acme() as http:
        assert http.get(f"/memory_banks/{made['id']}").json()["id"] == made["id"]
        general = http.post("/memory_banks", json={"name": "facts", "type": "general"}).json()
        listed = http.get("/memory_banks", params={"type": "conversation"}).json()
        assert [b["id"] for b in listed["data"]] == [made["id"]]
        assert listed["total"] == 1 and listed["next_offset"] is None
        everything = http.get("/memory_banks").json()
        assert {b["id"] for b in everything["data"]} == {made["id"], general["id"]}
        renamed = http.put(
            f"/memory_banks/{made['id']}",
            json={"name": "Renamed Bank", "compaction_prompt": "Summarize concisely"},
        )
        assert renamed.status_code == 200
        assert renamed.json()["name"] == "Renamed Bank"
        assert banks.get(api.ctx("acme"), made["id"]).compaction_prompt == "Summarize concisely"
        deleted = http.delete(f"/memory_banks/{made['id']}")
        assert deleted.status_code == 200 and deleted.json() == {"id": made["id"], "deleted": True}
        assert http.get(f"/memory_banks/{made['id']}").status_code == 404
    assert [b.id for b in banks.list_banks(api.ctx("acme"))] == [general["id"]]


def test_list_pages(api: Api) -> None:
    with api.as_acme() as http:
        ids = [
            http.post("/memory_banks", json={"name": f"b{i}", "type": "general"}).json()["id"]
            for i in range(3)
        ]
        first = http.get("/memory_banks", params={"limit": 2}).json()
        second = http.get("/memory_banks", params={"limit": 2, "offset": 2}).json()
        bad = http.get("/memory_banks", params={"limit": 0})
    assert [b["id"] for b in first["data"] + second["data"]] == ids
    assert first["next_offset"] == 2 and second["next_offset"] is None and first["total"] == 3
    assert bad.status_code == 422 and "limit" in bad.json()["error"]["message"]


def test_templates(api: Api) -> None:
    with api.as_acme() as http:
        found = http.get("/memory_banks/templates").json()
    names = {t["name"] for t in found["data"]}
    assert found["total"] == len(names) >= 6
    assert all(t["type"] in ("conversation", "general") for t in found["data"])


def test_type_or_mode_change_is_409_and_changes_nothing(api: Api) -> None:
    made = _create(api)
    with api.as_acme() as http:
        for change in ({"type": "general"}, {"mode": "fast", "name": "x"}):
            response = http.put(f"/memory_banks/{made['id']}", json=change)
            assert response.status_code == 409
            assert "cannot change" in response.json()["error"]["message"]
    stored = banks.get(api.ctx("acme"), made["id"])
    assert (stored.name, stored.type, stored.mode) == ("support", "conversation", "balanced")


def test_delete_source_keeps_the_config(api: Api) -> None:
    made = _create(api)
    ctx = api.ctx("acme")
    bank = banks.get(ctx, made["id"])
    entries.write(ctx, bank, [EntryIn(key="k", speaker="Dana", content="hello there")])
    with api.as_acme() as http:
        response = http.delete(f"/memory_banks/{made['id']}/source")
        assert response.status_code == 200 and response.json()["source_reset"] is True
        assert http.get(f"/memory_banks/{made['id']}").status_code == 200
    assert entries.load(ctx, bank, "k") == []


def test_agents_and_stats(api: Api) -> None:
    made = _create(api)
    ctx = api.ctx("acme")
    bank = banks.get(ctx, made["id"])
    entries.write(
        ctx,
        bank,
        [EntryIn(key=f"c{i % 2}", speaker="Dana", content=f"turn {i}") for i in range(5)],
    )
    with api.as_acme() as http:
        agents = http.get(f"/memory_banks/{made['id']}/agents").json()
        stats = http.get(f"/memory_banks/{made['id']}/stats", params={"days": 30}).json()
        default = http.get(f"/memory_banks/{made['id']}/stats").json()
        bad = http.get(f"/memory_banks/{made['id']}/stats", params={"days": 0})
        both = http.get(
            f"/memory_banks/{made['id']}/stats", params={"days": 3, "since": "2026-10-01"}
        )
        naive = http.get(
            f"/memory_banks/{made['id']}/stats",
            params={"since": "2026-10-01T00:00:00", "until": "2026-12-01T00:00:00"},
        )
        empty = http.get(
            f"/memory_banks/{made['id']}/stats",
            params={"since": "2026-12-01T00:00:00+00:00", "until": "2026-10-01T00:00:00Z"},
        )
    assert agents["data"] == [] and agents["total"] == 0
    used = _create(api, name="customer-support")  # the shipped support-mail agent's bank
    with api.as_acme() as http:
        agents = http.get(f"/memory_banks/{used['id']}/agents").json()
    assert agents["data"] == [{"id": "support-mail", "name": "Support by e-mail"}]
    assert stats["total_entries"] == 5 and stats["unique_keys"] == 2
    assert stats["unique_speakers"] == 1 and default["total_entries"] == 5
    assert bad.status_code == 422
    assert both.status_code == 400 and "either" in both.json()["error"]["message"]
    assert naive.status_code == 200 and naive.json()["total_entries"] == 5
    assert empty.status_code == 400


def test_entries_write_search_load_get_forget(api: Api) -> None:
    made = _create(api)
    path = f"/memory_banks/{made['id']}"
    with api.as_acme() as http:
        first = http.post(
            f"{path}/entries",
            json={"key": "c1", "speaker": "Dana", "role": "user", "content": "my tank cracked"},
        )
        assert first.status_code == 201, first.text
        second = http.post(
            f"{path}/entries",
            json={"key": "c1", "speaker": "Agent", "content": "sorry, a new tank ships today"},
        ).json()
        hits = http.post(f"{path}/search", json={"text": "cracked tank", "k": 5}).json()
        thread = http.get(f"{path}/entries", params={"key": "c1"}).json()
        one = http.get(f"{path}/entries/{second['id']}").json()
        forgotten = http.delete(f"{path}/entries/{first.json()['id']}")
        after = http.get(f"{path}/entries", params={"key": "c1"}).json()
        missing = http.get(f"{path}/entries/{first.json()['id']}")
        no_speaker = http.post(f"{path}/entries", json={"key": "c1", "content": "who?"})
    assert first.json()["token_count"] > 0
    assert {h["entry"]["id"] for h in hits["data"]} == {first.json()["id"], second["id"]}
    assert [e["content"] for e in thread["data"]] == [
        "my tank cracked",
        "sorry, a new tank ships today",
    ]
    assert one["speaker"] == "Agent"
    assert forgotten.status_code == 200 and forgotten.json()["forgotten"] is True
    assert [e["id"] for e in after["data"]] == [second["id"]]
    assert missing.status_code == 404
    assert no_speaker.status_code == 400 and "speaker" in no_speaker.json()["error"]["message"]
