"""One temporary Prefect API for every flow test of the session (it takes ~15 s to start)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def prefect_api() -> Iterator[None]:
    """A temporary local Prefect server for flow runs, started once per session."""
    from prefect.testing.utilities import prefect_test_harness

    # A bound, not a wait: a healthy start takes ~15 s, but on a loaded machine (load 20 on
    # 2 cores) 60 s timed out and errored every flow test; 600 s survives that.
    with prefect_test_harness(server_startup_timeout=600):
        yield
