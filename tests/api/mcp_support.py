"""Helpers of the MCP tests: call tools through the SDK's in-memory client, read results."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import httpx2
import uvicorn
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


@dataclass
class Running:
    """A server that is up: its base URL."""

    url: str


@contextmanager
def serve(app: Any) -> Iterator[Running]:
    """Run an ASGI app under uvicorn on 127.0.0.1 (a port the kernel picks) for the block."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20.0
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield Running(url=f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def http_client(url: str, **headers: str) -> Client:
    """Return an MCP client over streamable HTTP to `url` sending `headers` on every request."""
    session = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0))
    return Client(streamable_http_client(url, http_client=session))
