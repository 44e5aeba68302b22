"""Test compaction, the config assistant, agents and the memory layers over HTTP."""

from __future__ import annotations

from api_support import Api, wait_job

from memory import banks, entries
from memory.agents import longterm, working
from memory.agents import registry as agents
from memory.agents.registry import Agent, BankRef
from memory.agents.turns import Turn
from memory.models import EntryIn


def _bank(api: Api, **fields: object) -> str:
    with api.as_acme() as http:
        body = {"name": "support", "type": "conversation", **fields}
        made: str = http.post("/memory_banks", json=body).json()["id"]
    ctx = api.ctx("acme")
    items = [
        EntryIn(key="c1", speaker="Dana", content=f"order {1000 + i} arrived damaged on day {i}")
        for i in range(8)
    ]
    entries.write(ctx, banks.get(ctx, made), items)
    return made


def test_test_compaction_of_a_bank_returns_the_run_and_changes_nothing(api: Api) -> None:
    bank = _bank(api, max_turns=6)
    ctx = api.ctx("acme")
    before = (banks.get(ctx, bank), entries.read(ctx, banks.get(ctx, bank)))
    with api.as_acme() as http:
        started = http.post(
            f"/memory_banks/{bank}/test-compaction",
            json={"compaction_prompt": "Keep only essential facts."},
        )
        assert started.status_code == 202 and started.json()["kind"] == "test-compaction"
        done = wait_job(http, started.json()["status_url"])
        blank = http.post(f"/memory_banks/{bank}/test-compaction", json={"compaction_prompt": " "})
    assert done["status"] == "succeeded", done
    run = done["result"]
    assert run["bank"] == bank and run["prompt"] == "Keep only essential facts."
    assert len(run["original"]) == 8 and run["summary"] and run["surviving"]
    criteria = {c["name"] for c in run["evaluation"]["criteria"]}
    assert len(criteria) >= 4 and run["evaluation"]["offline"] is True
    assert "heuristic" in run["evaluation"]["judge"].lower()
    assert (banks.get(ctx, bank), entries.read(ctx, banks.get(ctx, bank))) == before
    assert blank.status_code == 400 and "empty" in blank.json()["error"]["message"]


def test_test_compaction_of_pasted_entries_needs_no_bank(api: Api) -> None:
    pasted = "\n".join(
        f"{'Dana' if i % 2 else 'Agent'}: message {i} about ticket 77" for i in range(6)
    )
    with api.as_acme() as http:
        done = wait_job(
            http,
            http.post(
                "/memory_banks/test-compaction",
                params={"wait": 20},
                json={
                    "compaction_prompt": "Keep ticket numbers.",
                    "source": {"kind": "pasted", "text": pasted},
                    "max_turns": 4,
                },
            ).json()["status_url"],
        )
    assert done["status"] == "succeeded", done
    assert done["result"]["bank"] is None and len(done["result"]["original"]) == 6


def test_config_assistant_proposes_then_accept_applies_exactly_it(api: Api) -> None:
    bank = _bank(api)
    ctx = api.ctx("acme")
    before = banks.get(ctx, bank)
    description = "customer support history, about 50 messages per day per customer"
    with api.as_acme() as http:
        proposal = http.post(
            "/memory_banks/generate_memory_bank_config", json={"description": description}
        ).json()
        for_bank = http.post(
            f"/memory_banks/{bank}/generate_memory_bank_config", json={"description": description}
        ).json()
        assert banks.get(ctx, bank) == before  # proposing changes nothing
        accepted = http.post(
            f"/memory_banks/{bank}/generate_memory_bank_config/accept",
            json={"proposal": for_bank},
        )
        general = {**for_bank, "bank_type": "general"}
        wrong_type = http.post(
            f"/memory_banks/{bank}/generate_memory_bank_config/accept",
            json={"proposal": general},
        )
        empty = http.post("/memory_banks/generate_memory_bank_config", json={"description": ""})
        coerced = http.post(
            f"/memory_banks/{bank}/generate_memory_bank_config/accept",
            json={"proposal": {**for_bank, "offline": 0}},
        )
    assert proposal["rationale"] and proposal["offline"] is True
    assert coerced.status_code == 422 and "offline" in coerced.json()["error"]["message"]
    assert accepted.status_code == 200
    stored = banks.get(ctx, bank)
    assert (stored.compaction_prompt, stored.max_turns, stored.retention_days) == (
        for_bank["compaction_prompt"],
        for_bank["max_turns"],
        for_bank["retention_days"],
    )
    assert wrong_type.status_code == 400 and banks.get(ctx, bank) == stored
    assert empty.status_code == 400


def test_agents_using_a_bank(api: Api) -> None:
    bank = _bank(api)
    ctx = api.ctx("acme")
    agents.define_agent(
        ctx, Agent(id="helper", name="Helper", banks=[BankRef(bank=bank, step="write")])
    )
    with api.as_acme() as http:
        found = http.get(f"/memory_banks/{bank}/agents").json()
    with api.as_beta() as http:
        theirs = http.get(f"/memory_banks/{bank}/agents")
    assert found["data"] == [{"id": "helper", "name": "Helper"}]
    assert theirs.status_code == 404


def test_remember_recall_list_forget_and_wipe(api: Api) -> None:
    with api.as_acme() as http:
        made = http.post(
            "/users/u1/memories",
            json={"content": "prefers tea over coffee", "type": "preference", "tags": ["drinks"]},
        )
        assert made.status_code == 201, made.text
        http.post("/users/u1/memories", json={"content": "lives in Lyon"})
        http.post("/users/u2/memories", json={"content": "prefers coffee"})
        recalled = http.post("/users/u1/memories/recall", json={"query": "tea", "k": 5}).json()
        listed = http.get("/users/u1/memories").json()
        forgotten = http.delete(f"/users/u1/memories/{made.json()['id']}")
        again = http.delete(f"/users/u1/memories/{made.json()['id']}")
        wiped = http.delete("/users/u2")
        bad = http.post("/users/u1/memories", json={"content": "x", "type": "mood"})
    assert {r["memory"]["user"] for r in recalled["data"]} == {"u1"}
    assert recalled["data"][0]["memory"]["content"] == "prefers tea over coffee"
    assert listed["total"] == 2
    assert forgotten.status_code == 200 and again.status_code == 404
    assert wiped.status_code == 200 and wiped.json()["user"] == "u2"
    assert sum(t["rows_removed"] for t in wiped.json()["tables"]) == 1
    ctx = api.ctx("acme")
    assert [m.content for m in longterm.memories(ctx, user="u1")] == ["lives in Lyon"]
    assert longterm.memories(ctx, user="u2") == []
    assert bad.status_code == 422


def test_end_conversation_merges_in_the_background(api: Api) -> None:
    ctx = api.ctx("acme")
    working.add_turns(
        ctx,
        "conv-1",
        [Turn(role="user", content="my name is Ana"), Turn(role="assistant", content="hi Ana")],
        user="u1",
        agent="helper",
    )
    with api.as_acme() as http:
        started = http.post(
            "/users/u1/conversations/end", json={"agent": "helper", "conversation": "conv-1"}
        )
        assert started.status_code == 202
        done = wait_job(http, started.json()["status_url"])
    assert done["status"] == "succeeded", done
    assert "Ana" in done["result"]["summary"]
