"""The only module that imports litellm: completions, remote embeddings, offline provider, guard.

litellm is imported lazily (it takes seconds), so code paths that use no model stay fast.
Offline models live under the `membank/` prefix, registered as a litellm custom provider, so
`litellm.completion(model="membank/extractive", ...)` runs the extractive summarizer with no
network and no API key. Real models are named as litellm names them (`openai/gpt-4o-mini`,
`ollama/llama3.1`, ...). Tests block real model requests with `allow_model_requests(False)`
or the environment variable `MEMBANK_BLOCK_MODEL_REQUESTS=1`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from memory.errors import InvalidInput, ModelRequestsBlocked, ProviderError
from memory.ports import Message
from memory.summarize import extractive_summary, parse_compaction_prompt

OFFLINE_PREFIX = "membank/"
DEFAULT_COMPLETION_MODEL = "membank/extractive"
OFFLINE_MODELS = {DEFAULT_COMPLETION_MODEL: "extractive (offline, no LLM)"}
"""Offline completion models and the label shown wherever their output appears."""
BLOCK_ENV = "MEMBANK_BLOCK_MODEL_REQUESTS"
RETRY_WAIT_SECONDS = 0.5
MAX_RETRY_WAIT_SECONDS = 8.0

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


def is_offline(model: str) -> bool:
    """Return whether model runs locally through membank's own provider (no network)."""
    return model.startswith(OFFLINE_PREFIX)


def describe(model: str) -> str:
    """Return a label for outputs of model, e.g. "extractive (offline, no LLM)"."""
    if model in OFFLINE_MODELS:
        return OFFLINE_MODELS[model]
    if is_offline(model):
        return f"{model} (offline, no LLM)"
    return f"{model} (LLM via litellm)"


def _guard(model: str) -> None:
    """Raise ModelRequestsBlocked if model is a real model and requests are blocked."""
    if not is_offline(model) and not model_requests_allowed():
        raise ModelRequestsBlocked(
            f"request to model {model!r} blocked: real model requests are off "
            f"(allow_model_requests(False) or {BLOCK_ENV}=1); use an offline "
            f"{OFFLINE_PREFIX}* model or a test double"
        )


def _litellm() -> ModuleType:
    """Return the litellm module, imported quietly and offline, with membank's provider set."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_DISABLE_BUG_REPORT_LINK", "true")
    import litellm

    litellm.suppress_debug_info = True  # else it prints help banners on stdout on errors
    provider = OFFLINE_PREFIX.rstrip("/")
    if not any(item["provider"] == provider for item in litellm.custom_provider_map):
        handler = _offline_handler_class(litellm)()
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": provider, "custom_handler": handler},
        ]
    return litellm


def _prompt_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """Return the text of the last user message (or the last message) of a chat."""
    users = [m for m in messages if m.get("role") == "user"] or list(messages)
    if not users:
        raise ValueError("no messages to summarize")
    content = users[-1].get("content")
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, Mapping)]
        content = "\n".join(str(part) for part in parts)
    if not isinstance(content, str):
        raise ValueError(f"message content is {type(content).__name__}, not text")
    return content


def offline_reply(model: str, messages: Sequence[Mapping[str, Any]]) -> str:
    """Return the reply of offline model (name without the prefix) to chat messages.

    Raises:
        ValueError: If the model is unknown or the messages hold no text.
    """
    if f"{OFFLINE_PREFIX}{model}" != DEFAULT_COMPLETION_MODEL:
        known = ", ".join(OFFLINE_MODELS)
        raise ValueError(f"unknown offline model {OFFLINE_PREFIX}{model}; known: {known}")
    previous, lines, budget = parse_compaction_prompt(_prompt_text(messages))
    return extractive_summary(lines, budget, previous_summary=previous)


def _offline_handler_class(litellm: ModuleType) -> type:
    """Return the litellm CustomLLM subclass that serves membank/* models."""

    from litellm.llms.custom_llm import CustomLLM, CustomLLMError

    class MembankOffline(CustomLLM):
        """litellm provider for membank's offline models (no network, deterministic)."""

        def completion(self, *args: Any, **kwargs: Any) -> Any:
            """Return a litellm ModelResponse carrying the offline model's reply."""
            model = str(kwargs["model"])
            try:
                text = offline_reply(model, kwargs["messages"])
            except ValueError as exc:
                error = CustomLLMError(status_code=400, message=str(exc))  # type: ignore[no-untyped-call]
                raise error from exc
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "finish_reason": "stop", "message": message}
            return litellm.ModelResponse(model=f"{OFFLINE_PREFIX}{model}", choices=[choice])

        async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
            """Return the same response as completion (the work is CPU-bound and quick)."""
            return self.completion(*args, **kwargs)

    return MembankOffline


class LiteLLMCompleter:
    """A Completer that sends chat messages to any litellm model name.

    Args:
        model: A litellm model name, e.g. "openai/gpt-4o-mini", "ollama/llama3.1" or the
            offline "membank/extractive".
        timeout: Seconds before one request is abandoned.
        retries: Extra attempts after a transient provider error (timeout, connection error,
            rate limit, server error), waiting RETRY_WAIT_SECONDS, doubled each time.
        temperature: Sampling temperature (dropped for models that do not take one).
        max_output_tokens: Cap on the reply's tokens, or None for the provider's default.
        api_base: Endpoint override, e.g. a self-hosted Ollama URL.
        extra: Further keyword arguments for `litellm.completion`.
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
    ) -> None:
        if not model.strip():
            raise InvalidInput("model name is empty; give a litellm model name or membank/...")
        self.model = model
        self.timeout = timeout
        self.retries = retries
        self.temperature = temperature
        self.max_output_tokens = max_output_tokens
        self.api_base = api_base
        self.extra = dict(extra or {})

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
        _guard(self.model)
        if not messages:
            raise InvalidInput("no messages to send to the model")
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
        try:
            response = _with_retries(litellm, litellm.completion, params, self.retries)
        except Exception as exc:  # provider SDKs raise many types; all become ProviderError
            raise self._provider_error(litellm, exc) from exc
        return _reply_text(self.model, response)

    def _provider_error(self, litellm: ModuleType, exc: Exception) -> ProviderError:
        if isinstance(exc, litellm.Timeout):
            return ProviderError(
                f"model {self.model!r} timed out after {self.timeout}s: {_cause(exc)}"
            )
        return ProviderError(f"model {self.model!r} failed: {_cause(exc)}")


def _with_retries(litellm: ModuleType, call: Any, params: dict[str, Any], retries: int) -> Any:
    """Return call(**params), retried up to `retries` times after a transient error."""
    for attempt in range(retries):
        try:
            return call(**params)
        except Exception as exc:
            if not _transient(litellm, exc):
                raise
        time.sleep(min(RETRY_WAIT_SECONDS * 2**attempt, MAX_RETRY_WAIT_SECONDS))
    return call(**params)


def _transient(litellm: ModuleType, exc: Exception) -> bool:
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
