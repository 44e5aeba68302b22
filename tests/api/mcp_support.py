"""Helpers of the MCP tests: call tools through the SDK's in-memory client, read results."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.types import CallToolResult

T = TypeVar("T")


def run(work: Callable[[], Awaitable[T]]) -> T:
    """Run an async test body to completion (asyncio)."""
    return anyio.run(work)


def structured(result: CallToolResult) -> Any:
    """Return a successful call's structured result (a list tool's list, unwrapped)."""
    assert not result.is_error, result.content
    data = result.structured_content
    assert data is not None
    if set(data) == {"result"}:
        return data["result"]
    return data


def error_text(result: CallToolResult) -> str:
    """Return a failed call's message."""
    assert result.is_error, result.structured_content
    return " ".join(getattr(item, "text", "") for item in result.content)


def call(server: MCPServer, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """Call one tool on `server` through a fresh in-memory client."""

    async def work() -> CallToolResult:
        async with Client(server) as client:
            return await client.call_tool(name, arguments)

    return run(work)


def ok(server: MCPServer, name: str, arguments: dict[str, Any]) -> Any:
    """Call a tool that must succeed; returns its structured result."""
    return structured(call(server, name, arguments))


def fails(server: MCPServer, name: str, arguments: dict[str, Any]) -> str:
    """Call a tool that must fail as a tool error; returns its message."""
    return error_text(call(server, name, arguments))


def http_client(url: str, **headers: str) -> Client:
    """Return an MCP client over streamable HTTP to `url` sending `headers` on every request."""
    session = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0))
    return Client(streamable_http_client(url, http_client=session))
