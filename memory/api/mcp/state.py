"""The state of an MCP server that runs without the REST app (stdio, `membank mcp --http`)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory.api.state import ApiLimits, ApiState
from memory.context import Context


@contextmanager
def own_state(base: Context, limits: ApiLimits | None = None) -> Iterator[ApiState]:
    """Yield a state like the REST app's (the same job runner, a temporary export folder) for
    the server's life; the pool stops and the folder is removed when the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="membank-mcp-exports-"))
    state = ApiState.open(base, exports_dir=folder, limits=limits)
    try:
        yield state
    finally:
        state.close()
        shutil.rmtree(folder, ignore_errors=True)
