"""Long work as jobs: compact now, exports (start, poll, download JSON and Parquet), estimate."""

from __future__ import annotations

import io
import json
import threading

import pyarrow.parquet as pq
import pytest
from api_support import Api, wait_job

from memory import banks, entries
from memory.errors import InvalidInput, NotFound
from memory.models import EntryIn
from memory.ops.jobs import Jobs, TooManyJobs


def _bank_with_entries(api: Api, **fields: object) -> str:
    with api.as_acme() as http:
        body = {"name": "support", "type": "conversation", **fields}
        bank_id: str = http.post("/memory_banks", json=body).json()["id"]
    ctx = api.ctx("acme")  # memory.entries.write only appends: no compaction
    bank = banks.get(ctx, bank_id)
    items = [
        EntryIn(key=f"c{i % 2}", speaker="Dana" if i % 3 else "Ops", content=f"order {i} shipped")
        for i in range(12)
    ]
    entries.write(ctx, bank, items)
    return bank_id


def test_compact_now_is_a_job_whose_result_says_what_each_partition_did(api: Api) -> None:
    bank = _bank_with_entries(api, max_turns=4, compaction_prompt="Keep order numbers.")
    with api.as_acme() as http:
        started = http.post(f"/memory_banks/{bank}/compact")
        assert started.status_code == 202
        assert started.json()["status_url"] == f"/jobs/{started.json()['id']}"
        done = wait_job(http, started.json()["status_url"])
        one_key = http.post(
            f"/memory_banks/{bank}/compact", json={"key": "c0"}, params={"wait": 10}
        )
    assert done["status"] == "succeeded" and done["kind"] == "compact"
    assert sorted(r["key"] for r in done["result"]) == ["c0", "c1"]
    assert all(r["status"] == "compacted" for r in done["result"]), done["result"]
    ctx = api.ctx("acme")
    thread = entries.load(ctx, banks.get(ctx, bank), "c0")
    assert [e.kind for e in thread].count("summary") == 1 and len(thread) <= 4
    assert one_key.json()["status"] == "succeeded"
    assert [r["key"] for r in one_key.json()["result"]] == ["c0"]


def test_export_json_and_parquet_then_download(api: Api) -> None:
    bank = _bank_with_entries(api)
    with api.as_acme() as http:
        made = http.post(
            "/authenticated/resource-exports",
            json={"resource_type": "memory_bank", "resource_id": bank},
        )
        assert made.status_code == 202 and made.json()["format"] == "json"
        done = wait_job(http, made.json()["status_url"])
        assert done["status"] == "succeeded" and done["entries"] == 12, done
        file = http.get(done["download_url"])
        parquet = http.post(
            "/authenticated/resource-exports",
            params={"wait": 10},
            json={
                "resource_type": "memory_bank",
                "resource_id": bank,
                "format": "parquet",
                "filters": {"key": "c1", "speaker": "Dana"},
            },
        ).json()
        table_file = http.get(wait_job(http, parquet["status_url"])["download_url"])
        estimate = http.post(
            "/authenticated/resource-exports/estimate",
            json={"resource_type": "memory_bank", "resource_id": bank},
        ).json()
    assert file.headers["content-type"] == "application/json"
    exported = json.loads(file.content)
    assert exported["bank"]["id"] == bank and exported["entry_count"] == 12
    assert {e["content"] for e in exported["entries"]} == {f"order {i} shipped" for i in range(12)}
    table = pq.read_table(io.BytesIO(table_file.content))
    assert set(table.column("key").to_pylist()) == {"c1"}
    assert set(table.column("speaker").to_pylist()) == {"Dana"}
    assert estimate["entries"] == 12 and estimate["bytes"] > 0


def test_export_requests_are_checked_before_a_job_starts(api: Api) -> None:
    with api.as_acme() as http:
        general = http.post("/memory_banks", json={"name": "g", "type": "general"}).json()["id"]
        kind = http.post(
            "/authenticated/resource-exports",
            json={"resource_type": "agent", "resource_id": general},
        )
        missing = http.post(
            "/authenticated/resource-exports",
            json={"resource_type": "memory_bank", "resource_id": "nope"},
        )
        speaker = http.post(
            "/authenticated/resource-exports",
            json={
                "resource_type": "memory_bank",
                "resource_id": general,
                "filters": {"speaker": "Dana"},
            },
        )
        unknown = http.get("/authenticated/resource-exports/nope")
    assert kind.status_code == 422 and "resource_type" in kind.json()["error"]["message"]
    assert missing.status_code == 404
    assert speaker.status_code == 400 and "speaker" in speaker.json()["error"]["message"]
    assert unknown.status_code == 404


def _refuse(_: object) -> None:
    raise InvalidInput("no")


def test_the_pool_bounds_each_accounts_jobs_and_keeps_them_apart() -> None:
    release = threading.Event()
    pool = Jobs(workers=1, max_pending=1, keep=10)
    try:
        blocked = pool.submit("acme", "compact", lambda _: release.wait(30))
        with pytest.raises(TooManyJobs, match="wait for one"):
            pool.submit("acme", "compact", lambda _: None)
        other = pool.submit("beta", "compact", _refuse)
        with pytest.raises(NotFound):
            pool.get("beta", blocked.id)
        release.set()
        pool.wait(blocked, 30)
        pool.wait(other, 30)
        assert pool.get("acme", blocked.id).status == "succeeded"
        failed = pool.get("beta", other.id)
        assert (failed.status, type(failed.failure), failed.error) == ("failed", InvalidInput, "no")
        assert pool.submit("acme", "compact", lambda _: None).account == "acme"
    finally:
        release.set()
        pool.shutdown()
