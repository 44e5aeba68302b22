"""The only module that imports litellm: completions and remote embeddings for litellm model
names, and the guard that blocks real model requests in tests.

litellm is imported lazily (it takes seconds), only when a litellm model name is used; the
offline defaults (`membank/extractive`, the bundled embedder) are called directly and never
reach this module (`memory.providers`). Real models are named as litellm names them
(`openai/gpt-4o-mini`, `ollama/llama3.1`, ...). Tests block real model requests with
`allow_model_requests(False)` or the environment variable `MEMBANK_BLOCK_MODEL_REQUESTS=1`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ValidationError

from memory.errors import FormatRejected, InvalidInput, ModelRequestsBlocked, ProviderError
from memory.ports import Message
from memory.providers.labels import OFFLINE_PREFIX, describe, is_offline
from memory.providers.toolchat import ChatMessage, ToolCall
from memory.retry import RetryPolicy
from memory.types.problems import one_line

BLOCK_ENV = "MEMBANK_BLOCK_MODEL_REQUESTS"
RETRY_WAIT_SECONDS = 0.5
MAX_RETRY_WAIT_SECONDS = 8.0
RETRY_JITTER_SECONDS = 0.25

_state = {"allowed": True}


def allow_model_requests(flag: bool) -> bool:
    """Allow (True) or block (False) requests to real models; returns the previous setting."""
    previous = _state["allowed"]
    _state["allowed"] = flag
    return previous


def model_requests_allowed() -> bool:
    """Return whether real model requests may go out (the flag and the env var both allow)."""
    blocked_by_env = os.environ.get(BLOCK_ENV, "").strip().lower() in {"1", "true", "yes"}
    return _state["allowed"] and not blocked_by_env


def _guard(model: str) -> None:
    """Raise ModelRequestsBlocked if model is a real model and requests are blocked."""
    if not is_offline(model) and not model_requests_allowed():
        raise ModelRequestsBlocked(
            f"request to model {model!r} blocked: real model requests are off "
            f"(allow_model_requests(False) or {BLOCK_ENV}=1); use an offline "
            f"{OFFLINE_PREFIX}* model or a test double"
        )


def _litellm() -> ModuleType:
    """Return the litellm module, imported quietly and offline (no price-list download)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_DISABLE_BUG_REPORT_LINK", "true")
    import litellm

    litellm.suppress_debug_info = True  # else it prints help banners on stdout on errors
    return litellm


def provider_of(model: str) -> str:
    """Return the provider litellm routes `model` to, from its own name tables (no request,
    no network): how a model name is checked before any work that would need it.

    Raises:
        InvalidInput: litellm cannot route the name to a provider (e.g. `gpt-5-turbo` with no
            `provider/` prefix and not in litellm's tables, or an unknown `foo/bar`).
    """
    litellm = _litellm()
    try:
        _, provider, _, _ = litellm.get_llm_provider(model)
    except litellm.BadRequestError:
        raise InvalidInput(
            f"unknown model {model!r}: litellm cannot route it to a provider; name it with "
            "its provider, e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest or "
            "ollama/llama3.1"
        ) from None
    return str(provider)


class Reply(BaseModel):
    """A model's reply text and the tokens the request spent (prompt and completion)."""

    text: str
    tokens: int


class LiteLLMCompleter:
    """A Completer that sends chat messages to any litellm model name.

    Args:
        model: A litellm model name, e.g. "openai/gpt-4o-mini" or "ollama/llama3.1" (the
            offline `membank/` models are not litellm's: `memory.providers.completer_for`).
        timeout: Seconds before one request is abandoned.
        retries: Extra attempts after a transient provider error (timeout, connection error,
            rate limit, server error), by `retry_policy`.
        temperature: Sampling temperature (dropped for models that do not take one).
        max_output_tokens: Cap on the reply's tokens, or None for the provider's default.
        api_base: Endpoint override, e.g. a self-hosted Ollama URL.
        extra: Further keyword arguments for `litellm.completion`.
        sleep: How a wait between attempts is taken (tests pass one that only records it).
    """

    def __init__(
        self,
        model: str,
        *,
        timeout: float = 60,
        retries: int = 2,
        temperature: float = 0.0,
        max_output_tokens: int | None = None,
        api_base: str | None = None,
        extra: Mapping[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not model.strip():
            raise InvalidInput("model name is empty; give a litellm model name or membank/...")
        if is_offline(model):
            raise InvalidInput(
                f"{model!r} is membank's offline model, not a litellm one: get it from "
                "memory.providers.completer_for"
            )
        self.model = model
        self.timeout = timeout
        self.retries = retries
        self.temperature = temperature
        self.max_output_tokens = max_output_tokens
        self.api_base = api_base
        self.extra = dict(extra or {})
        self._retry = retry_policy(retries, sleep=sleep)

    @property
    def label(self) -> str:
        """Return how outputs of this completer should be labelled."""
        return describe(self.model)

    def complete(self, messages: Sequence[Message]) -> str:
        """Return the model's reply to messages, stripped.

        Raises:
            ModelRequestsBlocked: If the model is real and model requests are blocked.
            ProviderError: On any provider error, timeout, or empty or non-text output.
        """
        return self.reply(messages).text

    def reply(
        self, messages: Sequence[Message], *, response_format: Mapping[str, Any] | None = None
    ) -> Reply:
        """Return the model's reply to messages (stripped) and the tokens it spent.

        Args:
            messages: The chat to send.
            response_format: OpenAI-style `response_format` (`{"type": "json_object"}`,
                `{"type": "json_schema", ...}`), or None for free text.

        Raises:
            ModelRequestsBlocked: If the model is real and model requests are blocked.
            FormatRejected: The provider refused `response_format` (a bad request while one
                was given): ask again with another format.
            ProviderError: On any other provider error, timeout, or empty or non-text output.
        """
        if not messages:
            raise InvalidInput("no messages to send to the model")
        _guard(self.model)
        litellm = _litellm()
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [message.model_dump() for message in messages],
            "timeout": self.timeout,
            # membank retries itself (below): litellm's num_retries is applied twice for
            # OpenAI-style providers (its own loop and the SDK's), once for others
            "num_retries": 0,
            "temperature": self.temperature,
            "drop_params": True,
        }
        if self.max_output_tokens is not None:
            params["max_tokens"] = self.max_output_tokens
        if self.api_base is not None:
            params["api_base"] = self.api_base
        params.update(self.extra)
        if response_format is not None:
            params["response_format"] = dict(response_format)
        try:
            response = _with_retries(litellm, litellm.completion, params, self._retry)
        except Exception as exc:  # provider SDKs raise many types; all become ProviderError
            if response_format is not None and _refused_request(litellm, exc):
                kind = response_format.get("type")
                raise FormatRejected(
                    f"model {self.model!r} refused response_format {kind}: {_cause(exc)}"
                ) from exc
            raise self._provider_error(litellm, exc) from exc
        usage = getattr(response, "usage", None)
        tokens = getattr(usage, "total_tokens", 0) if usage is not None else 0
        return Reply(text=_reply_text(self.model, response), tokens=int(tokens or 0))

    def _provider_error(self, litellm: ModuleType, exc: Exception) -> ProviderError:
        if isinstance(exc, litellm.Timeout):
            return ProviderError(
                f"model {self.model!r} timed out after {self.timeout}s: {_cause(exc)}"
            )
        return ProviderError(f"model {self.model!r} failed: {_cause(exc)}")


def retry_policy(retries: int, *, sleep: Callable[[float], None] = time.sleep) -> RetryPolicy:
    """Return the policy for a model request: `retries` extra attempts after a transient error,
    waiting RETRY_WAIT_SECONDS (doubled each time, at most MAX_RETRY_WAIT_SECONDS) plus up to
    RETRY_JITTER_SECONDS."""
    return RetryPolicy(
        attempts=max(retries, 0) + 1,
        backoff_seconds=RETRY_WAIT_SECONDS,
        max_wait_seconds=MAX_RETRY_WAIT_SECONDS,
        jitter_seconds=RETRY_JITTER_SECONDS,
        sleep=sleep,
    )


def _with_retries(
    litellm: ModuleType, call: Any, params: dict[str, Any], policy: RetryPolicy
) -> Any:
    """Return call(**params), run again by `policy` after a transient error (this is the one
    layer that retries model errors: `memory.retry`)."""
    return policy.run(lambda: call(**params), when=lambda exc: _transient(litellm, exc))


def _refused_request(litellm: ModuleType, exc: Exception) -> bool:
    """Return whether the provider refused the request as such (400, 422, unsupported param)."""
    refused = (
        litellm.BadRequestError,
        litellm.UnprocessableEntityError,
        litellm.UnsupportedParamsError,
    )
    return isinstance(exc, refused)


def _transient(litellm: ModuleType, exc: BaseException) -> bool:
    """Return whether a provider error may pass on a retry (timeouts, connection, 429, 5xx)."""
    transient = (
        litellm.Timeout,
        litellm.APIConnectionError,
        litellm.RateLimitError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.BadGatewayError,
    )
    return isinstance(exc, transient)


def _cause(exc: BaseException) -> str:
    """Return the exception's type and the first line of its message, at most 300 chars."""
    lines = str(exc).strip().splitlines()
    first = lines[0] if lines else "no message"
    return f"{type(exc).__name__}: {first[:300]}"


def _reply_text(model: str, response: Any) -> str:
    """Return the text of a litellm completion response, or raise ProviderError."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise ProviderError(f"model {model!r} returned no choices")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        kind = type(content).__name__
        raise ProviderError(f"model {model!r} returned no text (content is {kind})")
    if not content.strip():
        raise ProviderError(f"model {model!r} returned an empty reply")
    return content.strip()


def embed_texts(
    model: str, texts: Sequence[str], *, timeout: float = 60, api_base: str | None = None
) -> list[list[float]]:
    """Return one embedding per text from a remote litellm embedding model, in input order.

    Raises:
        ModelRequestsBlocked: If the model is real and model requests are blocked.
        ProviderError: On any provider error or a malformed response.
    """
    if not texts:
        return []
    _guard(model)
    litellm = _litellm()
    params: dict[str, Any] = {"model": model, "input": list(texts), "timeout": timeout}
    if api_base is not None:
        params["api_base"] = api_base
    try:
        # retries are left to litellm here: it turns max_retries=0 into its default of 2
        response = litellm.embedding(**params)
    except Exception as exc:  # provider SDKs raise many types; all become ProviderError
        raise ProviderError(f"embedding model {model!r} failed: {_cause(exc)}") from exc
    return _vectors(model, getattr(response, "data", None), len(texts))


def _vectors(model: str, data: Any, expected: int) -> list[list[float]]:
    """Return the vectors of an embedding response's data, checked and ordered by index."""
    if not isinstance(data, list) or len(data) != expected:
        count = len(data) if isinstance(data, list) else 0
        raise ProviderError(f"embedding model {model!r} returned {count} vectors for {expected}")
    items = sorted(data, key=lambda item: _field(item, "index") or 0)
    vectors: list[list[float]] = []
    for item in items:
        vector = _field(item, "embedding")
        if not isinstance(vector, list) or not vector:
            raise ProviderError(f"embedding model {model!r} returned an empty or bad vector")
        try:
            vectors.append([float(value) for value in vector])
        except (TypeError, ValueError) as exc:
            raise ProviderError(f"embedding model {model!r} returned non-numbers") from exc
    if len({len(vector) for vector in vectors}) != 1:
        raise ProviderError(f"embedding model {model!r} returned vectors of mixed sizes")
    return vectors


def _field(item: Any, name: str) -> Any:
    """Return item[name] for a dict or item.name for an object."""
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def complete_with_tools(
    model: str,
    messages: Sequence[ChatMessage],
    tools: Sequence[Mapping[str, Any]],
    *,
    timeout: float = 60,
    retries: int = 2,
    sleep: Callable[[float], None] = time.sleep,
) -> ChatMessage:
    """Return the model's next assistant message, which may call some of `tools`.

    Raises:
        ModelRequestsBlocked: If the model is real and model requests are blocked.
        ProviderError: On any provider error or timeout, or a reply with neither text nor
            tool calls.
    """
    _guard(model)
    litellm = _litellm()
    params: dict[str, Any] = {
        "model": model,
        "messages": [message.wire() for message in messages],
        "tools": list(tools),
        "timeout": timeout,
        "num_retries": 0,
        "temperature": 0.0,
        "drop_params": True,
    }
    try:
        response = _with_retries(
            litellm, litellm.completion, params, retry_policy(retries, sleep=sleep)
        )
    except Exception as exc:  # provider SDKs raise many types; all become ProviderError
        raise ProviderError(f"model {model!r} failed: {_cause(exc)}") from exc
    choices = getattr(response, "choices", None)
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None)
    text = content.strip() if isinstance(content, str) and content.strip() else None
    try:
        calls = [
            ToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments or "")
            for call in getattr(message, "tool_calls", None) or []
        ]
        if text is None and not calls:
            raise ProviderError(f"model {model!r} returned neither text nor tool calls")
        return ChatMessage(role="assistant", content=text, tool_calls=calls)
    except ValidationError as exc:  # the model's reply breaks a turn rule: its failure
        raise ProviderError(f"model {model!r} returned a bad tool call: {one_line(exc)}") from exc
