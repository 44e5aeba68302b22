"""Entries, search, compaction jobs, exports and the memory layers through `Client`, against
a real server (uvicorn on 127.0.0.1)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from api_support import Api

from memory.agents import working
from memory.agents.turns import Turn
from memory.api.schemas import PastedInput
from memory.client import Client, InvalidInput, JobFailed, NotFound
from memory.models import Entry, SearchHit

pytestmark = pytest.mark.server


def _thread(client: Client, n: int = 8, **fields: object) -> str:
    bank = client.banks.create("support", type="conversation", **fields)
    for i in range(n):
        client.entries.write(
            bank.id,
            key="c1",
            speaker="Dana",
            content=f"order {1000 + i} arrived damaged on day {i}",
        )
    return bank.id


def test_write_load_get_search_forget(client: Client) -> None:
    bank = client.banks.create("support", type="conversation")
    written = client.entries.write(
        bank.id,
        key="customer-1",
        content="My order #88213 arrived with a cracked tank.",
        speaker="customer-1",
        role="user",
        tags=["order"],
        metadata={"channel": "mail"},
    )
    assert isinstance(written, Entry) and written.tags == ["order"]
    assert written.metadata == {"channel": "mail"}
    for i in range(4):
        client.entries.write(bank.id, key="customer-1", speaker="agent", content=f"reply {i}")
    thread = list(client.entries.load(bank.id, "customer-1", page_size=2))
    assert [e.content for e in thread][:2] == [written.content, "reply 0"] and len(thread) == 5
    assert client.entries.get(bank.id, written.id) == written
    hits = client.search(bank.id, text="cracked tank", k=3)
    assert hits and isinstance(hits[0], SearchHit)
    assert hits[0].entry.id == written.id and hits[0].score > 0
    only = client.search(bank.id, text="reply", speaker="agent", method="fts", min_score=0.0)
    assert {h.entry.speaker for h in only} == {"agent"}
    assert client.entries.forget(bank.id, written.id).forgotten is True
    with pytest.raises(NotFound):
        client.entries.get(bank.id, written.id)
    with pytest.raises(NotFound):
        client.entries.forget(bank.id, written.id)


def test_a_conversation_entry_without_speaker_is_a_400(client: Client) -> None:
    bank = client.banks.create("support", type="conversation")
    with pytest.raises(InvalidInput) as raised:
        client.entries.write(bank.id, key="c1", content="who said this?")
    assert raised.value.status == 400 and "speaker" in raised.value.message


def test_compact_now_is_a_job_to_wait_for(client: Client) -> None:
    bank = _thread(client, 12)
    client.banks.update(bank, max_turns=4, compaction_prompt="Keep order numbers.")
    started = client.banks.compact(bank)
    assert started.kind == "compact" and started.status_url == f"/jobs/{started.id}"
    done = client.jobs.wait(started, timeout=60)
    assert done.status == "succeeded" and [r["key"] for r in done.result] == ["c1"]
    assert done.result[0]["status"] == "compacted"
    assert client.jobs.get(started.id).status == "succeeded"
    kinds = [e.kind for e in client.entries.load(bank, "c1")]
    assert kinds.count("summary") == 1 and len(kinds) <= 4
    one_key = client.banks.compact(bank, key="c1", wait=10)
    assert client.jobs.wait(one_key.id).status == "succeeded"
    with pytest.raises(NotFound):
        client.jobs.get("no-such-job")


def test_test_compaction_of_a_bank_and_of_pasted_entries(client: Client) -> None:
    bank = _thread(client, 8, max_turns=20)
    before = list(client.entries.load(bank, "c1"))
    run = client.jobs.wait(
        client.banks.test_compaction(bank, "Keep only essential facts.", max_turns=6), timeout=60
    ).result
    assert run["bank"] == bank and run["prompt"] == "Keep only essential facts."
    assert len(run["original"]) == 8 and run["summary"] and run["evaluation"]["offline"] is True
    assert list(client.entries.load(bank, "c1")) == before  # the bank never changes
    with pytest.raises(InvalidInput) as blank:
        client.banks.test_compaction(bank, " ")
    assert blank.value.status == 400 and "empty" in blank.value.message
    pasted = "\n".join(
        f"{'Dana' if i % 2 else 'Agent'}: message {i} about ticket 77" for i in range(6)
    )
    draft = client.banks.test_compaction_draft(
        "Keep ticket numbers.", PastedInput(kind="pasted", text=pasted), max_turns=4, wait=20
    )
    done = client.jobs.wait(draft, timeout=60)
    assert done.result["bank"] is None and len(done.result["original"]) == 6
    synthetic = client.banks.test_compaction_draft(
        "Keep facts.", {"kind": "synthetic", "description": "a support chat", "count": 6}
    )
    assert client.jobs.wait(synthetic, timeout=60).status == "succeeded"


def test_a_job_that_fails_raises_with_the_code_the_direct_call_gives(client: Client) -> None:
    bank = _thread(client, 1)  # a compaction test needs at least 2 entries
    with pytest.raises((JobFailed, InvalidInput)) as raised:  # a failed job, or a 400 at once
        client.jobs.wait(client.banks.test_compaction(bank, "Keep facts."), timeout=60)
    assert raised.value.code == "invalid_input" and "at least 2" in raised.value.message


def test_export_estimate_wait_download_json_and_parquet(client: Client, tmp_path: Path) -> None:
    bank = _thread(client, 6)
    estimate = client.exports.estimate(bank)
    assert estimate.entries == 6
    made = client.exports.create(bank, filters={"speaker": "Dana"})
    assert made.resource_id == bank and made.format == "json"
    done = client.exports.wait(made, timeout=60)
    assert done.status == "succeeded" and done.download_url and done.entries == 6
    document = json.loads(client.exports.download(done))
    assert len(document["entries"]) == 6
    parquet = client.exports.wait(client.exports.create(bank, format="parquet", wait=10))
    saved = client.exports.download(parquet.id, to=tmp_path / "bank.parquet")
    assert saved == tmp_path / "bank.parquet"
    assert pq.read_table(io.BytesIO(saved.read_bytes())).num_rows == 6
    assert client.exports.get(parquet.id).status == "succeeded"
    with pytest.raises(NotFound):
        client.exports.get("no-such-export")


def test_remember_recall_memories_forget_and_wipe(client: Client) -> None:
    tea = client.users.remember("u1", "prefers tea over coffee", type="preference", tags=["drinks"])
    client.users.remember("u1", "lives in Lyon")
    client.users.remember("u2", "prefers coffee", scope="agent", agent="helper")
    recalled = client.users.recall("u1", "tea", k=5)
    assert recalled[0].memory.content == "prefers tea over coffee" and recalled[0].score > 0
    assert {r.memory.user for r in recalled} == {"u1"}
    assert [m.content for m in client.users.memories("u1", page_size=1)] == [
        "prefers tea over coffee",
        "lives in Lyon",
    ]
    assert client.users.forget("u1", tea.id).id == tea.id
    with pytest.raises(NotFound):
        client.users.forget("u1", tea.id)
    receipt = client.users.wipe("u2")
    assert receipt.user == "u2" and receipt.rows_removed == 1
    assert list(client.users.memories("u2", agent="helper")) == []
    with pytest.raises(InvalidInput):
        client.users.remember("u1", "x", type="mood")


def test_end_conversation_merges_in_a_job(api: Api, client: Client) -> None:
    working.add_turns(
        api.ctx("acme"),
        "conv-1",
        [Turn(role="user", content="my name is Ana"), Turn(role="assistant", content="hi Ana")],
        user="u1",
        agent="helper",
    )
    started = client.users.end_conversation("u1", agent="helper", conversation="conv-1")
    done = client.jobs.wait(started, timeout=60)
    assert done.kind == "session-merge" and "Ana" in done.result["summary"]
