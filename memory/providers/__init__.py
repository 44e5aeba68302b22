"""Model providers: the offline defaults, called directly, and litellm for any other name.

`completer_for` returns the offline extractive summarizer for `membank/extractive` (no
litellm import, no network) and a litellm completer for any other model name, so any
litellm model (OpenAI, Anthropic, Ollama, ...) works by configuration alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.providers.labels import OFFLINE_PREFIX, describe, is_offline

if TYPE_CHECKING:
    from memory.ports import Completer
    from memory.settings import Settings

__all__ = ["OFFLINE_PREFIX", "completer_for", "describe", "is_offline"]


def completer_for(settings: Settings) -> Completer:
    """Return the completer `settings.llm_model` names: offline ones directly, others via
    litellm (imported only then).

    Raises:
        InvalidInput: the model is blank or an unknown `membank/` model.
    """
    model = settings.llm_model
    if is_offline(model):
        from memory.providers.extractive import offline_completer

        return offline_completer(model)
    from memory.providers.llm import LiteLLMCompleter

    return LiteLLMCompleter(model, timeout=settings.llm_timeout, retries=settings.llm_retries)
