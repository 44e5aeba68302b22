"""End to end over streamable HTTP: a real uvicorn server, the SDK's client, API keys."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import serve
from mcp_support import error_text, http_client, run, structured

from memory import banks
from memory.accounts import create_key, revoke_key
from memory.api.mcp.http import create_app_with_mcp, standalone_app
from memory.api.mcp.state import own_state
from memory.clock import FixedClock
from memory.context import Context
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@dataclass
class Server:
    """A running app with MCP at /mcp, its storage and keys of two accounts."""

    url: str
    base: Context
    acme_key: str
    acme_key_id: str
    beta_key: str

    def ctx(self, account: str) -> Context:
        return Context(
            store=LanceStore(self.base.store.uri), account=account, embedder=hashing_embedder
        )


@pytest.fixture
def live(tmp_path: Path, clock: FixedClock) -> Iterator[Server]:
    base = Context(
        store=LanceStore(str(tmp_path / "db")),
        account="unused",
        clock=clock,
        embedder=hashing_embedder,
    )
    acme, beta = create_key(base, "acme"), create_key(base, "beta")
    app = create_app_with_mcp(base, exports_dir=tmp_path / "exports")
    with serve(app) as running:
        yield Server(running.url, base, acme.key, acme.key_id, beta.key)


def test_a_client_with_a_key_creates_writes_recalls_compacts_and_exports(live: Server) -> None:
    async def work() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with http_client(f"{live.url}/mcp", **{"X-API-Key": live.acme_key}) as client:
            seen["tools"] = [t.name for t in (await client.list_tools()).tools]

            async def tool(tool_name: str, **arguments: Any) -> Any:
                return structured(await client.call_tool(tool_name, arguments))

            bank = seen["bank"] = await tool(
                "create_memory_bank",
                name="support",
                type="conversation",
                compaction_prompt="Keep order numbers.",
            )
            for i in range(4):
                await tool(
                    "write_memory_bank_entry",
                    memory_bank_id=bank["id"],
                    key="customer-1",
                    speaker="Dana",
                    content=f"Order #{88210 + i} arrived with a cracked tank.",
                )
            seen["hits"] = await tool(
                "search_memory_bank", memory_bank_id=bank["id"], text="order 88212", k=1
            )
            await tool("memory_remember", user="dana", content="Dana's order number is 88213.")
            seen["recalled"] = await tool("memory_recall", user="dana", query="order", k=3)
            await tool("update_memory_bank", memory_bank_id=bank["id"], max_turns=2)
            seen["compacted"] = await tool("compact_memory_bank_now", memory_bank_id=bank["id"])
            seen["export"] = await tool(
                "create_resource_export", resource_type="memory_bank", resource_id=bank["id"]
            )
        async with http_client(f"{live.url}/mcp", Authorization=f"Bearer {live.beta_key}") as other:
            seen["beta_list"] = structured(await other.call_tool("list_memory_banks", {}))
            seen["beta_recall"] = structured(
                await other.call_tool("memory_recall", {"user": "dana", "query": "order"})
            )
            seen["beta_get"] = error_text(
                await other.call_tool("get_memory_bank", {"memory_bank_id": bank["id"]})
            )
        return seen

    seen = run(work)
    assert {"create_memory_bank", "compact_memory_bank_now", "create_resource_export"} <= set(
        seen["tools"]
    )
    bank = seen["bank"]
    assert bank["account"] == "acme"  # the key's account, not an argument
    assert (
        seen["hits"]["data"][0]["entry"]["content"] == "Order #88212 arrived with a cracked tank."
    )
    assert [(r["key"], r["status"]) for r in seen["compacted"]] == [("customer-1", "compacted")]
    assert seen["export"]["status"] == "succeeded" and seen["export"]["entries"] >= 2
    assert [m["memory"]["user"] for m in seen["recalled"]["data"]] == ["dana"]
    assert seen["beta_list"]["total"] == 0 and seen["beta_recall"]["data"] == []
    assert "not found: no bank" in seen["beta_get"]

    rest = httpx.Client(base_url=live.url, headers={"X-API-Key": live.acme_key})
    assert rest.get(f"/memory_banks/{bank['id']}").json()["name"] == "support"
    download = rest.get(seen["export"]["download_url"])  # an MCP export downloads over REST
    assert download.status_code == 200 and b"88213" in download.content
    beta = httpx.Client(base_url=live.url, headers={"X-API-Key": live.beta_key})
    assert beta.get(seen["export"]["download_url"]).status_code == 404


def test_no_key_a_wrong_key_and_a_revoked_key_are_401(live: Server) -> None:
    post = httpx.Client(base_url=live.url, headers=ACCEPT).post
    missing = post("/mcp", json=INIT)
    assert missing.status_code == 401
    assert missing.json()["error"]["code"] == "unauthorized"
    assert "missing" in missing.json()["error"]["message"]
    assert post("/mcp", json=INIT, headers={"X-API-Key": "mbk_nope"}).status_code == 401
    assert post("/mcp", json=INIT, headers={"Authorization": "Basic abc"}).status_code == 401
    assert post("/mcp", json=INIT, headers={"X-API-Key": live.acme_key}).status_code == 200

    revoke_key(live.base, live.acme_key_id)
    revoked = post("/mcp", json=INIT, headers={"X-API-Key": live.acme_key})
    assert revoked.status_code == 401 and "revoked" in revoked.json()["error"]["message"]
    assert banks.list_banks(live.ctx("acme")) == []


def test_a_bad_call_over_http_is_a_tool_error(live: Server) -> None:
    async def work() -> str:
        async with http_client(f"{live.url}/mcp", **{"X-API-Key": live.acme_key}) as client:
            result = await client.call_tool(
                "create_memory_bank", {"name": "x", "type": "general", "account": "beta"}
            )
            return error_text(result)

    message = run(work)
    assert "account: Extra inputs are not permitted" in message
    assert banks.list_banks(live.ctx("beta")) == [] and banks.list_banks(live.ctx("acme")) == []


def test_the_standalone_server_serves_mcp_with_keys(tmp_path: Path, clock: FixedClock) -> None:
    base = Context(store=LanceStore(str(tmp_path / "db")), clock=clock, embedder=hashing_embedder)
    key = create_key(base, "acme").key
    with own_state(base) as state, serve(standalone_app(state)) as running:
        denied = httpx.post(f"{running.url}/mcp", json=INIT, headers=ACCEPT)

        async def work() -> Any:
            async with http_client(f"{running.url}/mcp", **{"X-API-Key": key}) as client:
                return structured(
                    await client.call_tool("create_memory_bank", {"name": "n", "type": "general"})
                )

        made = run(work)
    assert denied.status_code == 401
    assert made["account"] == "acme"
    assert [b.name for b in banks.list_banks(replace(base, account="acme"))] == ["n"]
