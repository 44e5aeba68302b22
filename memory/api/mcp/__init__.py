"""The MCP server: membank's operations as tools (stdio and streamable HTTP)."""

from memory.api.mcp.server import build_server

__all__ = ["build_server"]
