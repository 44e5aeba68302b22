"""Serve the REST API, with the MCP server at `/mcp`, with uvicorn (`membank api`)."""

from __future__ import annotations

import uvicorn

from memory.api.mcp.http import create_app_with_mcp
from memory.context import Context


def serve(base: Context, *, host: str, port: int) -> None:
    """Run the API (REST, and MCP at /mcp) over `base`'s store on host:port until Ctrl-C."""
    uvicorn.run(create_app_with_mcp(base, host=host), host=host, port=port, log_level="info")
