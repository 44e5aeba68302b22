"""One temporary Prefect API for every flow test of the session (it takes ~15 s to start)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def prefect_api() -> Iterator[None]:
    """A temporary local Prefect server for flow runs, started once per session."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=60):
        yield
