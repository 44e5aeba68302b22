"""End to end over stdio: the SDK's client starts `membank mcp` on a fresh store."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_support import error_text, run, structured

from memory import banks, entries
from memory.wiring import open_context

MEMBANK = str(Path(sys.executable).with_name("membank"))


def test_a_client_over_stdio_creates_writes_searches_recalls_and_compacts(tmp_path: Path) -> None:
    data = str(tmp_path / "db")
    params = StdioServerParameters(
        command=MEMBANK,
        args=["mcp", "--data", data, "--account", "acme"],
        env={**os.environ, "MEMBANK_BLOCK_MODEL_REQUESTS": "1"},
        cwd=str(tmp_path),
    )

    async def work() -> dict[str, Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            seen: dict[str, Any] = {"tools": [t.name for t in (await session.list_tools()).tools]}

            async def tool(tool_name: str, **arguments: Any) -> Any:
                return structured(await session.call_tool(tool_name, arguments))

            bank = await tool(
                "create_memory_bank",
                name="support",
                type="conversation",
                mode="fast",
                compaction_prompt="Keep order numbers.",
            )
            seen["bank"] = bank
            for i, text in enumerate(["My order #88213 has a cracked tank.", "Sorry!", "Thanks."]):
                await tool(
                    "write_memory_bank_entry",
                    memory_bank_id=bank["id"],
                    key="customer-1",
                    speaker="Dana" if i % 2 == 0 else "Agent",
                    content=text,
                )
            seen["hits"] = await tool(
                "search_memory_bank", memory_bank_id=bank["id"], text="broken water tank", k=1
            )
            for fact in ["Dana prefers e-mail over phone calls.", "Dana's dog is named Rex."]:
                await tool("memory_remember", user="dana", content=fact, type="preference")
            seen["recalled"] = await tool(
                "memory_recall", user="dana", query="how should we contact her?", k=1
            )
            await tool("update_memory_bank", memory_bank_id=bank["id"], max_turns=2)
            seen["compacted"] = await tool("compact_memory_bank_now", memory_bank_id=bank["id"])
            seen["bad"] = error_text(
                await session.call_tool("get_memory_bank", {"memory_bank_id": bank["id"], "x": 1})
            )
            return seen

    seen = run(work)
    assert {"create_memory_bank", "search_memory_bank", "compact_memory_bank_now"} <= set(
        seen["tools"]
    )
    assert [h["entry"]["content"] for h in seen["hits"]["data"]] == [
        "My order #88213 has a cracked tank."
    ]
    assert [m["memory"]["content"] for m in seen["recalled"]["data"]] == [
        "Dana prefers e-mail over phone calls."
    ]
    assert [(r["key"], r["status"]) for r in seen["compacted"]] == [("customer-1", "compacted")]
    assert "x: Extra inputs are not permitted" in seen["bad"]

    ctx = open_context(data, account="acme")  # what the server wrote, read back directly
    bank = banks.get(ctx, seen["bank"]["id"])
    thread = entries.load(ctx, bank, "customer-1")
    assert [e.kind for e in thread].count("summary") == 1
    assert "88213" in " ".join(e.content for e in thread)
    assert banks.list_banks(open_context(data, account="local")) == []  # --account was used
