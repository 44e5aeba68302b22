"""Names and labels of models, with no provider imported: what is offline, how it is shown."""

from __future__ import annotations

OFFLINE_PREFIX = "membank/"
DEFAULT_COMPLETION_MODEL = "membank/extractive"
OFFLINE_MODELS = {DEFAULT_COMPLETION_MODEL: "extractive summarizer (offline)"}
"""Offline completion models and the label shown wherever their output appears."""


def is_offline(model: str) -> bool:
    """Return whether `model` runs locally in membank itself (no network, no litellm)."""
    return model.startswith(OFFLINE_PREFIX)


def describe(model: str) -> str:
    """Return a label for outputs of `model`, e.g. "extractive summarizer (offline)"."""
    if model in OFFLINE_MODELS:
        return OFFLINE_MODELS[model]
    if is_offline(model):
        return f"{model} (offline, no LLM)"
    return f"{model} (LLM via litellm)"
