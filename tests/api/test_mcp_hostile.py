"""The MCP tools against hostile or large input (issue 21): poison metadata is refused before
anything is written, search takes `min_score`, and every export (Parquet, JSON of any size)
can be read back over the transport itself."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pyarrow.parquet as pq
import pytest
from mcp.server import MCPServer
from mcp_support import fails, ok

from memory import banks, entries
from memory.api.mcp import build_server
from memory.api.mcp.state import own_state
from memory.context import Context


@pytest.fixture
def server(ctx: Context) -> Iterator[MCPServer]:
    with ExitStack() as stack:
        yield build_server(stack.enter_context(own_state(ctx)))


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_metadata_too_deep_is_a_tool_error_and_nothing_is_written(
    server: MCPServer, ctx: Context
) -> None:
    ok(server, "create_memory_bank", {"name": "g", "type": "general"})
    message = fails(
        server,
        "write_memory_bank_entry",
        {"memory_bank_id": "g", "key": "k", "content": "c", "metadata": _nested(120)},
    )
    assert "nested more than" in message
    assert entries.load(ctx, banks.get(ctx, "g"), key="k") == []
    assert ok(server, "load_memory_bank_thread", {"memory_bank_id": "g", "key": "k"})["total"] == 0


def test_search_takes_min_score(server: MCPServer) -> None:
    ok(server, "create_memory_bank", {"name": "g", "type": "general"})
    for text in ("the vault code is 4411", "lunch was soup"):
        ok(server, "write_memory_bank_entry", {"memory_bank_id": "g", "key": "k", "content": text})
    query = {"memory_bank_id": "g", "text": "vault code", "min_score": 0}
    everything = ok(server, "search_memory_bank", query)["data"]
    assert len(everything) == 2
    best = max(hit["score"] for hit in everything)
    only_best = ok(server, "search_memory_bank", {**query, "min_score": best})["data"]
    assert [hit["entry"]["content"] for hit in only_best] == ["the vault code is 4411"]
    assert "min_score" in fails(server, "search_memory_bank", {**query, "min_score": 2})


def _read_all(server: MCPServer, export_id: str, length: int) -> tuple[bytes, dict[str, Any]]:
    pieces: list[bytes] = []
    offset: int | None = 0
    last: dict[str, Any] = {}
    while offset is not None:
        last = ok(
            server,
            "read_resource_export_bytes",
            {"export_id": export_id, "offset": offset, "length": length},
        )
        pieces.append(base64.b64decode(last["data"]))
        offset = last["next_offset"]
    return b"".join(pieces), last


def test_parquet_and_large_json_exports_read_back_over_mcp(server: MCPServer) -> None:
    ok(server, "create_memory_bank", {"name": "g", "type": "general"})
    for n in range(3):
        ok(
            server,
            "write_memory_bank_entry",
            {"memory_bank_id": "g", "key": "k", "content": f"e{n}"},
        )
    parquet = ok(
        server,
        "create_resource_export",
        {"resource_type": "memory_bank", "resource_id": "g", "format": "parquet", "wait": 30},
    )
    assert parquet["status"] == "succeeded"
    assert "read_resource_export_bytes" in fails(
        server, "read_resource_export", {"export_id": parquet["id"]}
    )
    data, last = _read_all(server, parquet["id"], length=1000)
    assert len(data) == last["bytes"] and hashlib.sha256(data).hexdigest() == last["sha256"]
    assert pq.read_table(io.BytesIO(data)).num_rows == 3
    made = ok(
        server,
        "create_resource_export",
        {"resource_type": "memory_bank", "resource_id": "g", "wait": 30},
    )
    text, _ = _read_all(server, made["id"], length=100)  # many ranges, as a large file takes
    assert [e["content"] for e in json.loads(text)["entries"]] == ["e0", "e1", "e2"]


def test_a_thread_pages_by_cursor_over_mcp(server: MCPServer) -> None:
    ok(server, "create_memory_bank", {"name": "g", "type": "general"})
    for n in range(5):
        ok(
            server,
            "write_memory_bank_entry",
            {"memory_bank_id": "g", "key": "k", "content": f"e{n}"},
        )
    args = {"memory_bank_id": "g", "key": "k", "limit": 2}
    seen: list[str] = []
    cursor = None
    while True:
        page = ok(
            server, "load_memory_bank_thread", {**args, **({"cursor": cursor} if cursor else {})}
        )
        seen += [e["content"] for e in page["data"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"e{n}" for n in range(5)]
