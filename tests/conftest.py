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

MARKS_BY_PATH = {
    "tests/flows/": "server",  # the session's Prefect test harness
    "tests/api/": "server",  # real uvicorn servers, MCP over stdio and HTTP
    "tests/lab/": "server",  # Streamlit AppTest and `membank lab`
    "tests/lab/test_browser.py": "browser",
    "tests/judge/test_llm_judge.py": "server",  # the fake OpenAI-compatible server
    "tests/lab_core/test_labcore_llm.py": "server",
    "tests/test_model_providers.py": "server",
    "tests/test_rerank.py": "server",
    "tests/test_object_storage.py": "s3",
    "tests/test_crash_finality.py": "process",  # kill -9 of child processes
    "tests/test_compaction_crash.py": "process",
    "tests/test_concurrency.py": "process",
    "tests/test_serve.py": "process",
    "tests/test_readme.py": "process",
    "tests/judge/test_judge_cli.py": "process",  # the console script as a child process
    "tests/lab_core/test_labcore_cli.py": "process",
    "tests/agents/test_agents_cli.py": "process",
    "tests/agents/test_longterm_cli.py": "process",
}
"""Whole folders and modules whose tests all start the same slow thing; single tests in other
modules carry their own `@pytest.mark.<mark>`. `make test-fast` skips every marked test."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test by the folder or module it lives in (see MARKS_BY_PATH)."""
    root = Path(str(config.rootpath))
    for item in items:
        where = Path(str(item.path)).relative_to(root).as_posix()
        for prefix, mark in MARKS_BY_PATH.items():
            if where.startswith(prefix):
                item.add_marker(getattr(pytest.mark, mark))


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
