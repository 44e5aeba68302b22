"""Parity: each MCP tool and its REST endpoint give the same result for the same input.

Two accounts start from nothing on one server: acme does every step over REST, beta over
MCP. The answers must match field for field, except the fields that differ by nature
(ids the store made, the account, URLs holding a job id).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import serve
from mcp import Client
from mcp_support import error_text, http_client, run, structured

from memory.accounts import create_key
from memory.api.mcp.http import create_app_with_mcp
from memory.clock import FixedClock
from memory.context import Context
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder

VOLATILE = {
    "id",
    "bank_id",
    "bank",
    "account",
    "summary_id",
    "resource_id",
    "status_url",
    "download_url",
}
CURRENT = {"Seclai-Version": "2026-08-03"}
WITH_REST_TWIN = {
    "create_memory_bank",
    "get_memory_bank",
    "update_memory_bank",
    "list_memory_banks",
    "list_memory_bank_templates",
    "write_memory_bank_entry",
    "search_memory_bank",
    "load_memory_bank_thread",
    "get_memory_bank_stats",
    "forget_memory_bank_entry",
    "create_resource_export",
    "get_resource_export",
    "compact_memory_bank_now",
    "delete_memory_bank_source",
    "delete_memory_bank",
    "test_memory_bank_compaction",
    "generate_memory_bank_config",
    "accept_memory_bank_config",
    "memory_remember",
    "memory_recall",
    "memory_forget",
    "read_resource_export",
    "get_memory_bank_entry",
    "list_memory_bank_agents",
    "estimate_resource_export",
    "list_user_memories",
}
"""Every tool: each has a REST endpoint (read_resource_export: the download's)."""


def normalised(value: Any) -> Any:
    """Return `value` with the fields that differ by nature replaced by a placeholder."""
    if isinstance(value, dict):
        return {
            k: "<volatile>" if k in VOLATILE and v is not None else normalised(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [normalised(v) for v in value]
    return value


@dataclass
class Sides:
    """The same steps over REST (acme) and over MCP (beta)."""

    rest: httpx.Client
    mcp: Client

    async def both(
        self, tool: str, args: dict[str, Any], method: str, path: str, **request: Any
    ) -> tuple[Any, Any]:
        """Run one step on each side; returns (REST JSON, tool result)."""
        answer = self.rest.request(method, path, **request)
        assert answer.status_code < 300, answer.text
        return answer.json(), structured(await self.mcp.call_tool(tool, args))


@pytest.fixture
def urls(tmp_path: Path, clock: FixedClock) -> Iterator[tuple[str, str, str]]:
    base = Context(
        store=LanceStore(str(tmp_path / "db")), account="x", clock=clock, embedder=hashing_embedder
    )
    acme, beta = create_key(base, "acme").key, create_key(base, "beta").key
    with serve(create_app_with_mcp(base, exports_dir=tmp_path / "exports")) as running:
        yield running.url, acme, beta


def test_every_tool_answers_like_its_rest_endpoint(urls: tuple[str, str, str]) -> None:
    url, acme, beta = urls
    rest = httpx.Client(base_url=url, headers={"X-API-Key": acme, **CURRENT}, timeout=60)
    pairs: list[tuple[str, Any, Any]] = []

    async def work() -> set[str]:
        async with http_client(f"{url}/mcp", **{"X-API-Key": beta}) as mcp:
            sides = Sides(rest, mcp)

            async def step(
                tool: str, args: dict[str, Any], method: str, path: str, **kw: Any
            ) -> tuple[Any, Any]:
                got = await sides.both(tool, args, method, path, **kw)
                pairs.append((tool, *got))
                return got

            spec = {"name": "support", "type": "conversation", "compaction_prompt": "Keep facts."}
            made_rest, made_mcp = await step(
                "create_memory_bank", spec, "POST", "/memory_banks", json=spec
            )
            a, b = made_rest["id"], made_mcp["id"]
            await step("get_memory_bank", {"memory_bank_id": b}, "GET", f"/memory_banks/{a}")
            change = {"description": "Customer threads", "max_turns": 0, "retention_days": 7}
            await step(
                "update_memory_bank",
                {"memory_bank_id": b, **change},
                "PUT",
                f"/memory_banks/{a}",
                json=change,
            )
            await step(
                "list_memory_banks",
                {"type": "conversation"},
                "GET",
                "/memory_banks",
                params={"type": "conversation"},
            )
            await step(
                "list_memory_bank_templates",
                {"limit": 3},
                "GET",
                "/memory_banks/templates",
                params={"limit": 3},
            )
            written = []
            for i, text in enumerate(
                ["Order 88213 has a cracked tank.", "We ship a new one.", "Thanks, Dana here."]
            ):
                entry = {
                    "key": "c1",
                    "speaker": "Dana" if i != 1 else "Agent",
                    "content": text,
                    "tags": [f"t{i}"],
                }
                written.append(
                    await step(
                        "write_memory_bank_entry",
                        {"memory_bank_id": b, **entry},
                        "POST",
                        f"/memory_banks/{a}/entries",
                        json=entry,
                    )
                )
            query = {"text": "cracked tank order", "k": 1}  # k=1: ties at 0 order by id
            await step(
                "search_memory_bank",
                {"memory_bank_id": b, **query},
                "POST",
                f"/memory_banks/{a}/search",
                json=query,
            )
            await step(
                "load_memory_bank_thread",
                {"memory_bank_id": b, "key": "c1"},
                "GET",
                f"/memory_banks/{a}/entries",
                params={"key": "c1"},
            )
            await step(
                "get_memory_bank_stats",
                {"memory_bank_id": b, "days": 7},
                "GET",
                f"/memory_banks/{a}/stats",
                params={"days": 7},
            )
            rest_entry, mcp_entry = written[1]
            await step(
                "get_memory_bank_entry",
                {"memory_bank_id": b, "entry_id": mcp_entry["id"]},
                "GET",
                f"/memory_banks/{a}/entries/{rest_entry['id']}",
            )
            await step(
                "list_memory_bank_agents",
                {"memory_bank_id": b},
                "GET",
                f"/memory_banks/{a}/agents",
            )
            await step(
                "forget_memory_bank_entry",
                {"memory_bank_id": b, "entry_id": mcp_entry["id"]},
                "DELETE",
                f"/memory_banks/{a}/entries/{rest_entry['id']}",
            )
            export = {"resource_type": "memory_bank", "filters": {"key": "c1"}}
            await step(
                "estimate_resource_export",
                {**export, "resource_id": b},
                "POST",
                "/authenticated/resource-exports/estimate",
                json={**export, "resource_id": a},
            )
            exported = await step(
                "create_resource_export",
                {**export, "resource_id": b, "wait": 30},
                "POST",
                "/authenticated/resource-exports",
                params={"wait": 30},
                json={**export, "resource_id": a},
            )
            assert exported[0]["status"] == "succeeded"
            await step(
                "get_resource_export",
                {"export_id": exported[1]["id"]},
                "GET",
                f"/authenticated/resource-exports/{exported[0]['id']}",
            )
            download = rest.get(exported[0]["download_url"]).json()
            read = structured(
                await mcp.call_tool("read_resource_export", {"export_id": exported[1]["id"]})
            )
            pairs.append(("read_resource_export", download, json.loads(read["content"])))
            trial = {"compaction_prompt": "Keep order numbers.", "key": "c1", "max_turns": 1}
            job = rest.post(f"/memory_banks/{a}/test-compaction", params={"wait": 30}, json=trial)
            tried = structured(
                await mcp.call_tool("test_memory_bank_compaction", {"memory_bank_id": b, **trial})
            )
            pairs.append(("test_memory_bank_compaction", job.json()["result"], tried))
            two = {"max_turns": 1}
            await step(
                "update_memory_bank",
                {"memory_bank_id": b, **two},
                "PUT",
                f"/memory_banks/{a}",
                json=two,
            )
            job = rest.post(f"/memory_banks/{a}/compact", params={"wait": 30}).json()
            compacted = structured(
                await mcp.call_tool("compact_memory_bank_now", {"memory_bank_id": b})
            )
            pairs.append(("compact_memory_bank_now", job["result"], compacted))
            assert job["status"] == "succeeded" and compacted[0]["status"] == "compacted"
            ask = {"description": "meeting notes, about 10 a week", "type": "conversation"}
            proposals = await step(
                "generate_memory_bank_config",
                ask,
                "POST",
                "/memory_banks/generate_memory_bank_config",
                json=ask,
            )
            await step(
                "accept_memory_bank_config",
                {"memory_bank_id": b, "proposal": proposals[1]},
                "POST",
                f"/memory_banks/{a}/generate_memory_bank_config/accept",
                json={"proposal": proposals[0]},
            )
            fact = {"content": "Dana prefers e-mail.", "type": "preference", "tags": ["contact"]}
            kept = await step(
                "memory_remember",
                {"user": "dana", **fact},
                "POST",
                "/users/dana/memories",
                json=fact,
            )
            recall = {"query": "how to contact Dana", "k": 3}
            await step(
                "memory_recall",
                {"user": "dana", **recall},
                "POST",
                "/users/dana/memories/recall",
                json=recall,
            )
            await step(
                "list_user_memories",
                {"user": "dana"},
                "GET",
                "/users/dana/memories",
            )
            await step(
                "memory_forget",
                {"user": "dana", "memory_id": kept[1]["id"]},
                "DELETE",
                f"/users/dana/memories/{kept[0]['id']}",
            )
            await step(
                "delete_memory_bank_source",
                {"memory_bank_id": b},
                "DELETE",
                f"/memory_banks/{a}/source",
            )
            await step("delete_memory_bank", {"memory_bank_id": b}, "DELETE", f"/memory_banks/{a}")
            return {t.name for t in (await mcp.list_tools()).tools}

    listed = run(work)
    for tool, over_rest, over_mcp in pairs:
        assert normalised(over_mcp) == normalised(over_rest), tool
    assert {tool for tool, _, _ in pairs} == WITH_REST_TWIN == listed


def test_errors_have_the_same_kind_and_reason_over_both(urls: tuple[str, str, str]) -> None:
    url, acme, _ = urls
    rest = httpx.Client(base_url=url, headers={"X-API-Key": acme, **CURRENT})
    bank = rest.post("/memory_banks", json={"name": "g", "type": "general"}).json()
    kinds = {400: "invalid input", 404: "not found", 409: "conflict"}
    cases = [
        ("update_memory_bank", {"type": "conversation"}, "PUT", f"/memory_banks/{bank['id']}"),
        (
            "write_memory_bank_entry",
            {"key": "k", "content": "x", "speaker": "Al"},
            "POST",
            f"/memory_banks/{bank['id']}/entries",
        ),
        (
            "search_memory_bank",
            {"text": "x", "k": 5000},
            "POST",
            f"/memory_banks/{bank['id']}/search",
        ),
        ("create_memory_bank", {"name": "g", "type": "general"}, "POST", "/memory_banks"),
    ]

    async def work() -> list[str]:
        async with http_client(f"{url}/mcp", **{"X-API-Key": acme}) as mcp:
            messages = []
            for tool, args, _, _path in cases:
                extra = {} if tool == "create_memory_bank" else {"memory_bank_id": bank["id"]}
                messages.append(error_text(await mcp.call_tool(tool, {**extra, **args})))
            return messages

    for (tool, args, method, path), message in zip(cases, run(work), strict=True):
        answer = rest.request(method, path, json=args)
        kind = kinds[answer.status_code]
        assert message.startswith(f"Error executing tool {tool}: {kind}: "), (tool, message)
        assert message.endswith(answer.json()["error"]["message"]), tool
