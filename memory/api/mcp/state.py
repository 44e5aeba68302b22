"""The state of an MCP server that runs without the REST app (stdio, `membank mcp --http`)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

from memory.accounts import KeyStore
from memory.api import errors
from memory.api.jobs import Jobs
from memory.api.state import ApiLimits, ApiState
from memory.context import Context


@contextmanager
def own_state(base: Context, limits: ApiLimits | None = None) -> Iterator[ApiState]:
    """Yield a job pool and a temporary export folder like the REST app's, for the server's
    life; the pool stops and the folder is removed when the block ends."""
    chosen = limits or ApiLimits()
    folder = Path(tempfile.mkdtemp(prefix="membank-mcp-exports-"))
    jobs = Jobs(
        workers=chosen.workers,
        max_pending=chosen.max_pending,
        keep=chosen.keep_jobs,
        error_of=lambda exc: (
            errors.status_of(exc),
            errors.STATUS_CODES.get(errors.status_of(exc), "internal_error"),
        ),
        clock=base.clock,
    )
    try:
        yield ApiState(
            base=base,
            keys=cast(KeyStore, base.store),
            jobs=jobs,
            limits=chosen,
            exports_dir=folder,
        )
    finally:
        jobs.shutdown()
        shutil.rmtree(folder, ignore_errors=True)
