"""The litellm adapter: request guard, retries, errors become ProviderError."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from memory.errors import InvalidInput, ModelRequestsBlocked, ProviderError
from memory.ports import Message
from memory.providers import llm
from memory.providers.toolchat import ChatMessage

TEST_PROVIDER = "membanktest"


@pytest.fixture(scope="module")
def litellm() -> Any:
    """The litellm module (imported once, it is slow)."""
    return llm._litellm()


@pytest.fixture
def real_requests(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Lift the request guard for one test; only mocked or local providers are called."""
    monkeypatch.delenv(llm.BLOCK_ENV, raising=False)
    previous = llm.allow_model_requests(True)
    yield
    llm.allow_model_requests(previous)


@pytest.fixture
def no_network(litellm: Any, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replace litellm.completion/embedding with recorders that fail the test if called."""
    calls: list[dict[str, Any]] = []

    def refuse(**kwargs: Any) -> None:
        calls.append(kwargs)
        raise AssertionError(f"litellm was called: {kwargs.get('model')}")

    monkeypatch.setattr(litellm, "completion", refuse)
    monkeypatch.setattr(litellm, "embedding", refuse)
    return calls


class ScriptedProvider:
    """Builds a litellm CustomLLM whose reply, error or embedding a test scripts."""

    def __init__(self, litellm: Any) -> None:
        from litellm.llms.custom_llm import CustomLLM

        script = self

        class Handler(CustomLLM):
            def completion(self, *args: Any, **kwargs: Any) -> Any:
                return script.reply(kwargs)

            def embedding(self, *args: Any, **kwargs: Any) -> Any:
                return script.embed(kwargs)

        self.content: Any = "ok"
        self.tool_calls: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self.failures: list[BaseException] = []
        """Errors raised by the next calls, one each, before `error` or the reply."""
        self.vectors: Any = None
        self.calls: list[dict[str, Any]] = []
        self.litellm = litellm
        self.handler = Handler()

    def reply(self, kwargs: dict[str, Any]) -> Any:
        self.calls.append(kwargs)
        if self.failures:
            raise self.failures.pop(0)
        if self.error is not None:
            raise self.error
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        choice = {"index": 0, "finish_reason": "stop", "message": message}
        return self.litellm.ModelResponse(model=kwargs["model"], choices=[choice])

    def embed(self, kwargs: dict[str, Any]) -> Any:
        if self.error is not None:
            raise self.error
        response = kwargs["model_response"]
        vectors = self.vectors or [[float(len(t)), 1.0] for t in kwargs["input"]]
        response.data = [
            {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
        ]
        return response


@pytest.fixture
def scripted(
    litellm: Any, monkeypatch: pytest.MonkeyPatch, real_requests: None
) -> ScriptedProvider:
    """A scripted local provider registered as `membanktest/*` for this test only."""
    provider = ScriptedProvider(litellm)
    entry = {"provider": TEST_PROVIDER, "custom_handler": provider.handler}
    monkeypatch.setattr(litellm, "custom_provider_map", [*litellm.custom_provider_map, entry])
    return provider


@pytest.mark.process
def test_litellm_is_not_imported_until_a_model_is_called() -> None:
    code = "import sys, memory.providers.llm, memory.prompts; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_guard_flag_blocks_real_models_before_litellm(
    monkeypatch: pytest.MonkeyPatch, no_network: list[dict[str, Any]]
) -> None:
    monkeypatch.delenv(llm.BLOCK_ENV, raising=False)
    previous = llm.allow_model_requests(False)
    try:
        assert not llm.model_requests_allowed()
        with pytest.raises(ModelRequestsBlocked, match="openai/gpt-4o-mini"):
            llm.LiteLLMCompleter("openai/gpt-4o-mini").complete(
                [Message(role="user", content="hi")]
            )
        with pytest.raises(ModelRequestsBlocked):
            llm.embed_texts("openai/text-embedding-3-small", ["hi"])
    finally:
        llm.allow_model_requests(previous)
    assert no_network == []


def test_guard_env_var_blocks_even_when_the_flag_allows(
    monkeypatch: pytest.MonkeyPatch, no_network: list[dict[str, Any]], real_requests: None
) -> None:
    assert llm.model_requests_allowed()
    monkeypatch.setenv(llm.BLOCK_ENV, "1")
    assert not llm.model_requests_allowed()
    with pytest.raises(ModelRequestsBlocked) as caught:
        llm.LiteLLMCompleter("ollama/llama3.1").complete([Message(role="user", content="hi")])
    assert isinstance(caught.value, ProviderError)
    assert no_network == []


def test_mocked_reply_is_returned_stripped(litellm: Any, real_requests: None) -> None:
    completer = llm.LiteLLMCompleter("openai/gpt-4o-mini", extra={"mock_response": "  Hi.\n"})
    assert completer.complete([Message(role="user", content="hi")]) == "Hi."


@pytest.mark.parametrize("content", ["", "   \n\t "])
def test_empty_reply_is_a_provider_error(litellm: Any, real_requests: None, content: str) -> None:
    completer = llm.LiteLLMCompleter("openai/gpt-4o-mini", extra={"mock_response": content})
    with pytest.raises(ProviderError, match=r"'openai/gpt-4o-mini' returned an empty reply"):
        completer.complete([Message(role="user", content="hi")])


def test_provider_exception_is_a_provider_error_with_cause(
    litellm: Any, real_requests: None
) -> None:
    completer = llm.LiteLLMCompleter(
        "openai/gpt-4o-mini", retries=0, extra={"mock_response": Exception("quota exceeded")}
    )
    with pytest.raises(ProviderError, match=r"gpt-4o-mini.*quota exceeded") as caught:
        completer.complete([Message(role="user", content="hi")])
    assert caught.value.__cause__ is not None
    assert "\n" not in str(caught.value)


def test_timeout_is_a_provider_error(litellm: Any, real_requests: None) -> None:
    completer = llm.LiteLLMCompleter(
        "openai/gpt-4o-mini", timeout=0.01, retries=0, extra={"mock_timeout": True}
    )
    with pytest.raises(ProviderError, match=r"timed out after 0.01s"):
        completer.complete([Message(role="user", content="hi")])


def test_non_text_content_is_a_provider_error(scripted: ScriptedProvider) -> None:
    scripted.content = None
    completer = llm.LiteLLMCompleter(f"{TEST_PROVIDER}/tool-caller", retries=0)
    with pytest.raises(ProviderError, match="returned no text"):
        completer.complete([Message(role="user", content="hi")])


def test_handler_error_is_a_provider_error(scripted: ScriptedProvider) -> None:
    scripted.error = RuntimeError("connection reset by peer")
    completer = llm.LiteLLMCompleter(f"{TEST_PROVIDER}/flaky", retries=0)
    with pytest.raises(ProviderError, match="connection reset by peer"):
        completer.complete([Message(role="user", content="hi")])


def test_options_reach_the_provider(scripted: ScriptedProvider) -> None:
    completer = llm.LiteLLMCompleter(
        f"{TEST_PROVIDER}/m", temperature=0.3, max_output_tokens=77, retries=0
    )
    assert completer.complete([Message(role="system", content="s")]) == "ok"
    (call,) = scripted.calls
    assert call["optional_params"]["temperature"] == 0.3
    assert call["optional_params"]["max_tokens"] == 77
    assert call["messages"] == [{"role": "system", "content": "s"}]


def test_embed_texts_returns_vectors_in_order(scripted: ScriptedProvider) -> None:
    vectors = llm.embed_texts(f"{TEST_PROVIDER}/emb", ["a", "bbb"])
    assert vectors == [[1.0, 1.0], [3.0, 1.0]]
    assert llm.embed_texts(f"{TEST_PROVIDER}/emb", []) == []


def test_embed_texts_errors_are_provider_errors(scripted: ScriptedProvider) -> None:
    scripted.vectors = [[1.0, 2.0]]
    with pytest.raises(ProviderError, match="returned 1 vectors for 2"):
        llm.embed_texts(f"{TEST_PROVIDER}/emb", ["a", "b"])
    scripted.vectors = None
    scripted.error = RuntimeError("503 upstream")
    with pytest.raises(ProviderError, match="503 upstream"):
        llm.embed_texts(f"{TEST_PROVIDER}/emb", ["a"])


def test_empty_model_name_and_no_messages_are_invalid_input() -> None:
    with pytest.raises(InvalidInput):
        llm.LiteLLMCompleter("  ")
    with pytest.raises(InvalidInput):
        llm.LiteLLMCompleter("openai/gpt-4o-mini").complete([])
    with pytest.raises(InvalidInput, match="offline model, not a litellm one"):
        llm.LiteLLMCompleter("membank/extractive")


def _rate_limited(litellm: Any) -> BaseException:
    return litellm.RateLimitError("slow down", llm_provider=TEST_PROVIDER, model="m")


def test_a_transient_error_is_retried_with_growing_waits(scripted: ScriptedProvider) -> None:
    scripted.failures = [_rate_limited(scripted.litellm), _rate_limited(scripted.litellm)]
    waits: list[float] = []
    completer = llm.LiteLLMCompleter(f"{TEST_PROVIDER}/m", retries=2, sleep=waits.append)

    assert completer.complete([Message(role="user", content="hi")]) == "ok"

    assert len(scripted.calls) == 3
    assert len(waits) == 2 and 0 < waits[0] < waits[1] <= llm.MAX_RETRY_WAIT_SECONDS


def test_retries_are_bounded_and_the_last_error_is_reported(scripted: ScriptedProvider) -> None:
    scripted.error = _rate_limited(scripted.litellm)
    waits: list[float] = []
    completer = llm.LiteLLMCompleter(f"{TEST_PROVIDER}/m", retries=2, sleep=waits.append)

    with pytest.raises(ProviderError, match=r"RateLimitError.*slow down"):
        completer.complete([Message(role="user", content="hi")])

    assert (len(scripted.calls), len(waits)) == (3, 2)


def test_an_error_that_is_not_transient_is_not_retried(scripted: ScriptedProvider) -> None:
    scripted.error = scripted.litellm.AuthenticationError(
        "wrong key", llm_provider=TEST_PROVIDER, model="m"
    )  # a wrong key does not get better by asking again
    waits: list[float] = []
    completer = llm.LiteLLMCompleter(f"{TEST_PROVIDER}/m", retries=3, sleep=waits.append)

    with pytest.raises(ProviderError, match="wrong key"):
        completer.complete([Message(role="user", content="hi")])

    assert (len(scripted.calls), waits) == (1, [])


def test_tool_calls_retry_transient_errors_too(scripted: ScriptedProvider) -> None:
    scripted.error = _rate_limited(scripted.litellm)
    waits: list[float] = []
    message = ChatMessage(role="user", content="hi")

    with pytest.raises(ProviderError, match="slow down"):
        llm.complete_with_tools(f"{TEST_PROVIDER}/m", [message], [], retries=1, sleep=waits.append)

    assert (len(scripted.calls), len(waits)) == (2, 1)


def test_a_bad_tool_call_from_the_model_is_a_provider_error(scripted: ScriptedProvider) -> None:
    """Two calls with one id break the turn rules: the model failed, not the caller."""
    call = {"id": "c1", "type": "function", "function": {"name": "recall", "arguments": "{}"}}
    scripted.content = None
    scripted.tool_calls = [call, call]

    with pytest.raises(ProviderError, match="bad tool call"):
        llm.complete_with_tools(f"{TEST_PROVIDER}/m", [ChatMessage(role="user", content="hi")], [])
