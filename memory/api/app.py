"""The FastAPI app: `create_app(base_context)` with every router, the error handlers, the
request guard (request id, size limit, `Seclai-Version`) and the job pool.

One store serves the whole app (the base context's); each request gets a Context copied
from it with the API key's account, so no connection is opened per request.

Mounting other ASGI apps (the MCP server): pass `mounts=[("/mcp", asgi_app)]` and, for an
app that needs to run something for the server's life (the MCP session manager), a
`lifespans=[lambda app: session_manager.run()]` entry. A mounted app finds the API's state,
with `context_for(account)` and `account_for(raw_key)`, at `request.app.state.membank` of the
parent (`app.state.membank` of the returned app).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import cast

from fastapi import FastAPI
from starlette.types import ASGIApp

from memory.accounts import KeyStore
from memory.api import deps, errors, openapi
from memory.api.audit import Audit
from memory.api.idempotency import Idempotency, IdempotencyRows
from memory.api.middleware import Guard
from memory.api.rate_store import SharedBuckets, rate_file
from memory.api.ratelimit import RateLimits
from memory.api.routes import assistant, banks, entries, exports, jobs, layers, work
from memory.api.routes import audit as audit_routes
from memory.api.routes import keys as key_routes
from memory.api.routes import tagged as tagged_routes
from memory.api.state import ApiLimits, ApiState
from memory.api.writes import WritePool
from memory.context import Context
from memory.ops.audit import AuditRows

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]

DESCRIPTION = """\
Memory banks for LLM agents. Authenticate with an `X-API-Key` header (`membank keys create
--account A`); every read and write is scoped to the key's account, and a bank of another
account is a 404. Send `Seclai-Version: 2026-08-03` for the current behaviour (type-aware
retention defaults, `max_age_days` rejected); without it requests get the legacy behaviour.
Errors are `{"error": {"code", "message"}}`. Lists take `limit` and `offset`, or `cursor`
(the `next_cursor` of the page before). Long work
(exports, compaction, test compaction) answers 202 with a job to poll at its `status_url`.
"""


def create_app(
    base: Context,
    *,
    keys: KeyStore | None = None,
    limits: ApiLimits | None = None,
    exports_dir: Path | None = None,
    mounts: Sequence[tuple[str, ASGIApp]] = (),
    lifespans: Sequence[Lifespan] = (),
    writes: WritePool | None = None,
) -> FastAPI:
    """Return the REST API app over `base`'s store.

    Args:
        base: the context requests are served from (its account is never used: each request
            gets the account of its API key).
        keys: where API keys are looked up (default: `base.store`).
        limits: body size, job pool and page sizes.
        exports_dir: where export files wait for download (default: a temporary folder
            removed when the server stops).
        mounts: (path, ASGI app) pairs mounted under the API, e.g. the MCP server.
        lifespans: context managers entered while the server runs (after the job pool
            starts), e.g. the MCP session manager.
        writes: the pool entry writes run in (default: 2 low-priority threads, one write
            of an account at a time).

    Returns:
        The FastAPI application (serve it with uvicorn).
    """
    chosen = limits or ApiLimits.from_settings(base.settings)
    folder = exports_dir or Path(tempfile.mkdtemp(prefix="membank-exports-"))
    owned = exports_dir is None
    state = ApiState.open(base, exports_dir=folder, keys=keys, limits=chosen)
    pool = writes or WritePool()
    buckets = None
    if chosen.rate_limit > 0:
        where = rate_file(base.store.location)
        buckets = SharedBuckets(where, chosen.rate_limit, float(chosen.rate_window))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for entered in lifespans:
                await stack.enter_async_context(entered(app))
            try:
                yield
            finally:
                pool.close()
                state.close()
                if buckets is not None:
                    buckets.close()
                if owned:
                    shutil.rmtree(folder, ignore_errors=True)

    app = FastAPI(
        title="membank",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        responses=errors.ERROR_RESPONSES,
    )
    app.state.membank = state
    app.state.membank_writes = pool
    errors.install(app, authenticate=deps.key_problem)
    openapi.install(app)
    routers = (
        work.draft_router,  # /memory_banks/test-compaction, before /memory_banks/{bank_id}
        banks.router,
        entries.router,
        tagged_routes.router,
        work.router,
        assistant.router,
        layers.router,
        exports.router,
        jobs.router,
        key_routes.router,
        audit_routes.router,
    )
    for router in routers:
        app.include_router(router)
    # --- mounts (the MCP server) go here: `mounts=` of create_app ---
    for path, asgi in mounts:
        app.mount(path, asgi)
    if buckets is not None:
        app.add_middleware(RateLimits, key_of=state.key_for, buckets=buckets)
    app.add_middleware(Audit, rows=cast(AuditRows, base.store), now=base.clock.now)
    app.add_middleware(
        Idempotency,
        rows=cast(IdempotencyRows, base.store),
        account_for=state.account_for,
        now=base.clock.now,
        hold=timedelta(hours=chosen.idempotency_hours),
    )
    app.add_middleware(Guard, max_body=chosen.max_body, today=lambda: base.clock.now().date())
    return app
