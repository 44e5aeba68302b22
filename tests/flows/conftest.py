"""One temporary Prefect API for every flow test of the session (it takes ~15 s to start),
and the storage folder the flows open by path with a context to set up banks in it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.context import Context
from memory.store.lance import LanceStore
from memory.testing import HashingEmbedder


@pytest.fixture(scope="session")
def prefect_api() -> Iterator[None]:
    """A temporary local Prefect server for flow runs, started once per session."""
    from prefect.testing.utilities import prefect_test_harness

    # A bound, not a wait: a healthy start takes ~15 s, but on a loaded machine (load 20 on
    # 2 cores) 60 s timed out and errored every flow test; 600 s survives that.
    with prefect_test_harness(server_startup_timeout=600):
        yield


@pytest.fixture
def data(tmp_path: Path) -> str:
    """A LanceDB folder the flows open by path."""
    return str(tmp_path / "db")


@pytest.fixture
def writer(data: str) -> Context:
    """A context on that folder for setting up banks (system clock: flows use it too)."""
    return Context(
        store=LanceStore(data), account="acme", embedder=lambda m: HashingEmbedder(m.dims)
    )
