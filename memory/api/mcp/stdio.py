"""Run the MCP server on stdin/stdout, for a local MCP client that starts `membank mcp`."""

from __future__ import annotations

from memory.api.mcp.server import build_server
from memory.api.mcp.state import own_state
from memory.context import Context


def run_stdio(ctx: Context) -> None:
    """Serve membank's tools over stdio until the client closes the pipe; acts for ctx.account.

    stdout carries the protocol only: the SDK logs on stderr.
    """
    with own_state(ctx) as state:
        build_server(state).run("stdio")
