"""Fixtures of the judge tests: the scripted judge as a ScriptedCompleter, and as a model
server (for the litellm adapter's own tests)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_support import JudgeScript, judge_server

from memory.ports import Message
from memory.providers import llm
from memory.testing import ScriptedCompleter


@pytest.fixture
def script() -> JudgeScript:
    """The scripted judge's answers (tests change them before the first request)."""
    return JudgeScript()


@pytest.fixture
def served(script: JudgeScript, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeScript]:
    """The scripted judge on 127.0.0.1, litellm's openai provider pointed at it."""
    monkeypatch.delenv(llm.BLOCK_ENV, raising=False)
    previous = llm.allow_model_requests(True)
    with judge_server(script) as url:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        try:
            yield script
        finally:
            llm.allow_model_requests(previous)


@pytest.fixture
def judge(script: JudgeScript) -> ScriptedCompleter:
    """The scripted judge as a completer (no server, no litellm): it answers every call."""

    def reply(messages: list[Message]) -> str:
        chat = [{"role": m.role, "content": m.content} for m in messages]
        return script.answer({"messages": chat})[1]

    return ScriptedCompleter(model="openai/judge-test", queue=[reply] * 1000)
