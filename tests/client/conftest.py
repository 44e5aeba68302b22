"""Fixtures of the client tests: the API tests' live server (`api`, from tests/api/conftest.py,
loaded from there, not copied) and clients of its acme account."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

API_TESTS = Path(__file__).resolve().parents[1] / "api"
if str(API_TESTS) not in sys.path:
    sys.path.insert(0, str(API_TESTS))  # tests/api's helpers (api_support) import by name

from api_support import Api  # noqa: E402

from memory.client import Client, RetryPolicy  # noqa: E402


def _api_fixtures() -> object:
    spec = importlib.util.spec_from_file_location("api_conftest", API_TESTS / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api = _api_fixtures().api  # type: ignore[attr-defined]
"""The REST API on uvicorn, 127.0.0.1, over a fresh store; keys of acme and beta."""

NO_WAIT = RetryPolicy(attempts=3, backoff_seconds=0.0, max_wait_seconds=0.0)


@pytest.fixture
def client(api: Api) -> Iterator[Client]:
    """A client with acme's key (the current API version)."""
    with Client(api.url, api.acme_key, retry=NO_WAIT) as made:
        yield made
