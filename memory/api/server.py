"""Serve the REST API with uvicorn (`membank api`)."""

from __future__ import annotations

import uvicorn

from memory.api.app import create_app
from memory.context import Context


def serve(base: Context, *, host: str, port: int) -> None:
    """Run the API over `base`'s store on host:port until interrupted (Ctrl-C)."""
    uvicorn.run(create_app(base), host=host, port=port, log_level="info")
