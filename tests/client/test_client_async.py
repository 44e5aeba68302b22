"""`AsyncClient` against a real server: the same methods, awaited; lists as async iterators."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from api_support import Api

from memory.client import AsyncClient, InvalidInput, NotFound, Unauthorized

pytestmark = pytest.mark.server


async def _banks_entries_search(url: str, key: str) -> None:
    async with AsyncClient(url, key) as client:
        bank = await client.banks.create("support", type="conversation", max_turns=50)
        assert (await client.banks.get(bank.id)).name == "support"
        for i in range(5):
            await client.entries.write(
                bank.id, key="c1", speaker="Dana", content=f"order {100 + i} arrived cracked"
            )
        thread = [e async for e in client.entries.load(bank.id, "c1", page_size=2)]
        assert [e.content for e in thread] == [f"order {100 + i} arrived cracked" for i in range(5)]
        assert [b.id async for b in client.banks.list(page_size=1)] == [bank.id]
        hits = await client.search(bank.id, text="order 103", k=2)
        assert hits and hits[0].score > 0 and hits[0].entry.key == "c1"
        assert (await client.banks.stats(bank.id)).total_entries == 5
        assert (await client.entries.forget(bank.id, thread[0].id)).forgotten
        with pytest.raises(NotFound):
            await client.entries.get(bank.id, thread[0].id)
        with pytest.raises(InvalidInput):
            await client.banks.test_compaction(bank.id, " ")
        renamed = await client.banks.update(bank.id, description="mail")
        assert renamed.description == "mail"
        assert (await client.banks.delete(bank.id)).deleted


def test_banks_entries_search_and_errors(api: Api) -> None:
    asyncio.run(_banks_entries_search(api.url, api.acme_key))


async def _jobs_and_exports(url: str, key: str, folder: Path) -> None:
    async with AsyncClient(url, key) as client:
        bank = await client.banks.create("support", type="conversation")
        for i in range(10):
            await client.entries.write(
                bank.id,
                key="c1",
                speaker="Dana",
                content=f"order {1000 + i} arrived damaged on day {i}",
            )
        await client.banks.update(bank.id, max_turns=4)
        done = await client.jobs.wait(await client.banks.compact(bank.id), timeout=60)
        assert done.status == "succeeded" and done.result[0]["key"] == "c1"
        tested = await client.banks.test_compaction(bank.id, "Keep facts.", max_turns=2)
        assert (await client.jobs.wait(tested.id, timeout=60)).result["bank"] == bank.id
        export = await client.exports.wait(await client.exports.create(bank.id), timeout=60)
        document = json.loads(await client.exports.download(export))
        assert document["entries"] and export.entries == len(document["entries"])
        saved = await client.exports.download(export.id, to=folder / "bank.json")
        assert json.loads(saved.read_text()) == document


def test_jobs_and_exports(api: Api, tmp_path: Path) -> None:
    asyncio.run(_jobs_and_exports(api.url, api.acme_key, tmp_path))


async def _users_and_assistant(url: str, key: str) -> None:
    async with AsyncClient(url, key) as client:
        kept = await client.users.remember("u1", "prefers tea over coffee", type="preference")
        recalled = await client.users.recall("u1", "tea")
        assert recalled[0].memory.id == kept.id
        assert [m.id async for m in client.users.memories("u1")] == [kept.id]
        assert (await client.users.forget("u1", kept.id)).content == kept.content
        await client.users.remember("u2", "lives in Lyon")
        assert (await client.users.wipe("u2")).rows_removed == 1
        proposal = await client.assistant.propose("support chats, 50 messages a day")
        assert proposal.rationale
    async with AsyncClient(url, "mbk_wrong") as stranger:
        with pytest.raises(Unauthorized):
            await stranger.users.recall("u1", "tea")


def test_users_and_the_assistant(api: Api) -> None:
    asyncio.run(_users_and_assistant(api.url, api.acme_key))
