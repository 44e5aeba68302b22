"""Serve the REST API with uvicorn (`membank api`), the MCP server at `/mcp` included."""

from __future__ import annotations

import uvicorn

from memory.api.mcp.http import create_app_with_mcp
from memory.context import Context


def serve(base: Context, *, host: str, port: int) -> None:
    """Run the API (and MCP at /mcp) over `base`'s store on host:port until interrupted."""
    uvicorn.run(create_app_with_mcp(base, host=host), host=host, port=port, log_level="info")
