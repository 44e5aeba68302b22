"""The MCP server over streamable HTTP at `/mcp`, every request authenticated by an API key.

`KeyAuth` resolves the key of each HTTP request (`X-API-Key`, or `Authorization: Bearer`)
to its account and hands it to the tools in the request's scope; no key, or a malformed,
unknown or revoked one, is a 401 before the MCP layer sees the request. A tool reads the
account of the request that carried its call, never an argument, so one key can never act
for another account. The server runs stateless (no MCP session outlives its request).

Two ways to run it: inside the REST app (`create_app_with_mcp`, what `membank api` serves:
the same store, jobs and export folder as REST) or alone (`serve_http`, `membank mcp --http`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
from fastapi import FastAPI
from mcp.server import MCPServer
from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from memory.api.app import create_app
from memory.api.errors import error_json
from memory.api.mcp.server import build_server
from memory.api.mcp.state import own_state
from memory.api.state import ApiState
from memory.api.writes import WritePool
from memory.context import Context

MCP_PATH = "/mcp"
ACCOUNT = "membank_account"
"""Key of the request scope's state holding the API key's account."""
KeyResolver = Callable[[str | None], str | None]


def raw_key(headers: Headers) -> str | None:
    """Return the API key a request sent: `X-API-Key`, else `Authorization: Bearer KEY`."""
    given = headers.get("x-api-key")
    if given:
        return given
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class KeyAuth:
    """ASGI wrapper: 401 unless the request's API key resolves to an account, which it puts
    in the scope's state for the tools.

    Args:
        app: the MCP endpoint.
        account_for: returns the account of a key (None: missing, unknown or revoked).
    """

    def __init__(self, app: ASGIApp, account_for: KeyResolver) -> None:
        self.app = app
        self.account_for = account_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = raw_key(Headers(scope=scope))
        account = await anyio.to_thread.run_sync(self.account_for, key) if key else None
        if account is None:
            reason = "is not valid (unknown or revoked)" if key else "is missing"
            response = error_json(
                401,
                "unauthorized",
                f"the API key {reason}: send X-API-Key: KEY (or Authorization: Bearer KEY); "
                "create one with `membank keys create --account A`",
                headers={"WWW-Authenticate": 'Bearer realm="membank"'},
            )
            await response(scope, receive, send)
            return
        state = {**scope.get("state", {}), ACCOUNT: account}
        await self.app({**scope, "state": state}, receive, send)


def request_account(tool_ctx: ToolContext) -> str:
    """Return the account `KeyAuth` resolved for the HTTP request carrying this tool call."""
    request = tool_ctx.request_context.request
    scope: dict[str, Any] = getattr(request, "scope", None) or {}
    account = scope.get("state", {}).get(ACCOUNT)
    if not isinstance(account, str):
        raise ToolError("not authenticated: this server needs an API key on every request")
    return account


def http_server(
    state: ApiState, *, host: str, writes: WritePool | None = None
) -> tuple[MCPServer, ASGIApp]:
    """Return a server whose tools act for each request's API key, and its `/mcp` endpoint
    (entry writes in `writes`, the REST app's write pool, when given)."""
    server = build_server(state, request_account, writes=writes)
    server.streamable_http_app(streamable_http_path=MCP_PATH, stateless_http=True, host=host)
    endpoint = KeyAuth(StreamableHTTPASGIApp(server.session_manager), state.account_for)
    return server, endpoint


def _sessions(app: FastAPI) -> AbstractAsyncContextManager[None]:
    server: MCPServer = app.state.membank_mcp
    return server.session_manager.run()


def create_app_with_mcp(base: Context, *, host: str = "127.0.0.1", **options: Any) -> FastAPI:
    """Return the REST app (`create_app(base, **options)`) with the MCP server at `/mcp`.

    The tools share the app's store, job pool, write pool and export folder: an export
    started over MCP downloads over REST, and an account's MCP writes take turns with its
    REST writes.
    """
    lifespans = [*options.pop("lifespans", ()), _sessions]
    app = create_app(base, lifespans=lifespans, **options)
    server, endpoint = http_server(app.state.membank, host=host, writes=app.state.membank_writes)
    app.state.membank_mcp = server
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint, include_in_schema=False))
    return app


def standalone_app(state: ApiState, *, host: str = "127.0.0.1") -> Starlette:
    """Return an app serving only `/mcp` (its lifespan runs the MCP session manager)."""
    server, endpoint = http_server(state, host=host)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    return Starlette(routes=[Route(MCP_PATH, endpoint=endpoint)], lifespan=lifespan)


def serve_http(base: Context, *, host: str, port: int) -> None:
    """Serve `/mcp` alone with uvicorn on host:port until interrupted."""
    import uvicorn

    with own_state(base) as state:
        uvicorn.run(standalone_app(state, host=host), host=host, port=port, log_level="warning")
