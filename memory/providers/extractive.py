"""The offline extractive summarizer as a `Completer`: called directly, never through litellm.

It reads the compaction prompt's user message (previous summary, entries, token budget; see
`memory.prompts`) and returns the extractive summary, labelled as such on its first line.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.errors import InvalidInput
from memory.ports import Message
from memory.providers.labels import DEFAULT_COMPLETION_MODEL, OFFLINE_MODELS, describe
from memory.providers.summarize import extractive_summary, parse_compaction_prompt


class ExtractiveCompleter:
    """Summarizes a compaction prompt by extraction: no language model, deterministic."""

    model = DEFAULT_COMPLETION_MODEL

    @property
    def label(self) -> str:
        """Return how this completer's output is labelled where it is shown."""
        return describe(self.model)

    def complete(self, messages: Sequence[Message]) -> str:
        """Return the extractive summary the last user message asks for.

        Raises:
            InvalidInput: no messages, or none with text.
        """
        previous, lines, budget = parse_compaction_prompt(prompt_text(messages))
        return extractive_summary(lines, budget, previous_summary=previous)


def offline_completer(model: str) -> ExtractiveCompleter:
    """Return the offline completer named `model`.

    Raises:
        InvalidInput: `model` is not one of membank's offline models.
    """
    if model not in OFFLINE_MODELS:
        known = ", ".join(OFFLINE_MODELS)
        raise InvalidInput(f"unknown offline model {model!r}; known: {known}")
    return ExtractiveCompleter()


def prompt_text(messages: Sequence[Message]) -> str:
    """Return the text of the last user message (or the last message) of a chat."""
    users = [m for m in messages if m.role == "user"] or list(messages)
    if not users:
        raise InvalidInput("no messages to summarize")
    return users[-1].content
