"""`membank mcp`: the MCP server, on stdio (default) or streamable HTTP with API keys."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from memory.cli.args import context, port_number

DEFAULT_PORT = 8765


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the mcp command."""
    mcp = commands.add_parser(
        "mcp",
        parents=[common],
        help="serve membank's tools to MCP clients (stdio, or --http with API keys)",
    )
    mcp.add_argument(
        "--http",
        action="store_true",
        help="streamable HTTP at /mcp; every request needs an API key (X-API-Key or Bearer)",
    )
    mcp.add_argument("--host", default="127.0.0.1", help="--http: address (default 127.0.0.1)")
    mcp.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"--http: port (default {DEFAULT_PORT})",
    )
    mcp.add_argument(
        "--account",
        help="stdio: the account the tools act for (default $MEMBANK_ACCOUNT or 'local'); "
        "over --http the API key decides",
    )
    mcp.set_defaults(handler=_mcp)


def _mcp(args: argparse.Namespace) -> int:
    from memory.errors import InvalidInput
    from memory.settings import checked_account

    if args.http and args.account is not None:
        raise InvalidInput(
            "--account is for stdio only: over --http each request acts for its API key's "
            "account (create one with `membank keys create --account A`)"
        )
    ctx = context(args)
    if args.http:
        from memory.api.mcp.http import MCP_PATH, serve_http

        sys.stderr.write(
            f"membank: MCP on http://{args.host}:{args.port}{MCP_PATH} (API key required), "
            f"storage {ctx.store.location}; Ctrl-C stops it\n"
        )
        serve_http(ctx, host=args.host, port=args.port)
        return 0
    from memory.api.mcp.stdio import run_stdio

    if args.account is not None:
        ctx = replace(ctx, account=checked_account(args.account, ctx.settings))
    run_stdio(ctx)
    return 0
