"""Shared fixtures: a real LanceDB on tmp_path, a deterministic embedder, a fixed clock.

Real model calls are blocked for the whole session (the offline `membank/` provider stays
allowed), so a test can never reach the network by accident.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

os.environ["MEMBANK_BLOCK_MODEL_REQUESTS"] = "1"
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")

from memory.clock import FixedClock
from memory.context import Context
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder

START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    """A clock fixed at 2026-11-01 12:00 UTC that moves only when told to."""
    return FixedClock(START)


@pytest.fixture
def ctx(tmp_path: Path, clock: FixedClock) -> Iterator[Context]:
    """A context on a fresh LanceDB folder with the hashing embedder and the fixed clock."""
    store = LanceStore(str(tmp_path / "db"))
    yield Context(store=store, account="acme", clock=clock, embedder=hashing_embedder)


@pytest.fixture
def data(tmp_path: Path) -> str:
    """The storage URI CLI tests pass with --data."""
    return str(tmp_path / "db")


@pytest.fixture
def local(data: str) -> Context:
    """A context on the CLI tests' storage and default account, for setting up banks."""
    return Context(store=LanceStore(data), embedder=hashing_embedder)
