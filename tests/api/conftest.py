"""Fixtures of the API tests: a real uvicorn server over a fresh LanceDB, and keys of two
accounts (acme and beta)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from api_support import Api, serve

from memory.accounts import create_key
from memory.api.app import create_app
from memory.api.state import ApiLimits
from memory.clock import FixedClock
from memory.context import Context
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder


@pytest.fixture
def api(tmp_path: Path, clock: FixedClock) -> Iterator[Api]:
    """The REST API on uvicorn, 127.0.0.1, over a fresh store; keys of acme and beta."""
    base = Context(
        store=LanceStore(str(tmp_path / "db")),
        account="unused",
        clock=clock,
        embedder=hashing_embedder,
    )
    acme = create_key(base, "acme")
    beta = create_key(base, "beta")
    app = create_app(base, limits=ApiLimits(max_body=300_000), exports_dir=tmp_path / "exports")
    with serve(app) as running:
        yield Api(running.url, base, acme.key, acme.key_id, beta.key)
