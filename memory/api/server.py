"""Serve the REST API, with the MCP server at `/mcp`, with uvicorn (`membank api`).

`workers > 1` runs that many uvicorn worker processes on one port, each with its own
store connection (`app_from_env` builds each one's app from MEMBANK_* in the environment).
Keys, revocation, the bank registry and idempotent answers are in storage, so every worker
sees the same; jobs must then be durable (`MEMBANK_JOBS=prefect`): an in-process job lives
in one worker, and the next poll may reach another, so `serve` refuses that. Rate limits
are counted in a SQLite file the workers share (`memory.api.rate_store`), so a key's limit
holds across them.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from memory.api.mcp.http import create_app_with_mcp
from memory.context import Context
from memory.errors import InvalidInput
from memory.settings import Settings

SHARED_EXPORTS = "membank-exports"
"""The export folder (under the system's temporary folder) of durable jobs when
MEMBANK_EXPORTS_DIR is unset: kept across restarts, shared by the machine's processes."""


def exports_dir(settings: Settings) -> Path | None:
    """Return the export folder the settings ask for (None: a temporary one per process)."""
    if settings.exports_dir:
        return Path(settings.exports_dir).expanduser()
    if settings.jobs.strip().lower() == "prefect":
        return Path(tempfile.gettempdir()) / SHARED_EXPORTS
    return None


def check_workers(workers: int, settings: Settings) -> None:
    """Refuse more than one worker process unless jobs are durable.

    Raises:
        InvalidInput: `workers` under 1, or over 1 with in-process jobs.
    """
    if workers < 1:
        raise InvalidInput(f"--workers {workers}: give 1 or more")
    if workers > 1 and settings.jobs.strip().lower() != "prefect":
        raise InvalidInput(
            f"--workers {workers} needs durable jobs: a job in one worker's memory is not "
            "found by the others. Set MEMBANK_JOBS=prefect and PREFECT_API_URL (a Prefect "
            "server with the membank-job deployments and a worker), or use --workers 1"
        )


def serve(base: Context, *, host: str, port: int, workers: int = 1) -> None:
    """Run the API (REST, and MCP at /mcp) over `base`'s store on host:port until Ctrl-C,
    in `workers` uvicorn processes (see the module's docstring).

    Raises:
        InvalidInput: see `check_workers`.
    """
    check_workers(workers, base.settings)
    if workers == 1:
        app = create_app_with_mcp(base, host=host, exports_dir=exports_dir(base.settings))
        uvicorn.run(app, host=host, port=port, log_level="info")
        return
    os.environ["MEMBANK_URI"] = base.store.location  # the workers open the same storage
    os.environ["MEMBANK_API_HOST"] = host
    uvicorn.run(
        "memory.api.server:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="info",
    )


def app_from_env() -> FastAPI:
    """Return one worker process's app over MEMBANK_URI (uvicorn's factory)."""
    from memory.wiring import open_context

    base = open_context()
    host = os.environ.get("MEMBANK_API_HOST", "127.0.0.1")
    return create_app_with_mcp(base, host=host, exports_dir=exports_dir(base.settings))
