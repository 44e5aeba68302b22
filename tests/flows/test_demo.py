"""The demo's compaction step says what happened when the summary model or Prefect fails."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from memory.context import Context
from memory.settings import Settings


def test_inline_step_reports_a_failing_summary_model(ctx: Context) -> None:
    from flows.demo_sweeps import _inline

    failing = dataclasses.replace(ctx, settings=Settings(llm_model="openai/gpt-4o-mini"))
    shown: list[tuple[str, Any]] = []
    _inline(failing, lambda title, lines: shown.append((title, lines)))  # blocked in tests
    ((_, lines),) = shown
    assert "no summary" in lines[0] and "openai/gpt-4o-mini" in lines[0]
    assert "MEMBANK_LLM_MODEL" in lines[0]


def test_unreachable_prefect_is_explained_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.demo_sweeps import _prefect_unreachable

    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4399/api")
    message = _prefect_unreachable(RuntimeError("Failed to reach API"))
    assert "http://127.0.0.1:4399/api is not reachable" in message
    assert "membank serve" in message and "\n" not in message
    monkeypatch.delenv("PREFECT_API_URL")
    assert "temporary server did not start" in _prefect_unreachable(RuntimeError("timed out"))
