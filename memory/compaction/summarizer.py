"""The summary step of compaction: prompt file in, checked summary text out, via the completer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memory.errors import ProviderError
from memory.models import Bank, Entry
from memory.ports import Completer, Message
from memory.providers import describe
from memory.providers.tokens import count_tokens

if TYPE_CHECKING:
    from memory.context import Context

EXTRACTIVE_LABEL = "[extractive summary]"
"""First line of the offline extractive summarizer's output."""


def completer_for(ctx: Context) -> Completer:
    """Return the context's completer, or the one the settings name (offline or litellm)."""
    return ctx.summary_completer()


def summarizer_label(model: str) -> str:
    """Return how output of `model` is labelled where it is shown (extractive or the model)."""
    return f"{model}: {describe(model)}"


def build_messages(bank: Bank, covered: Sequence[Entry], budget_tokens: int) -> list[Message]:
    """Return the chat messages asking for a summary of `covered` within `budget_tokens`."""
    from memory.prompts import compaction_messages, entry_line

    previous = "\n\n".join(e.content for e in covered if e.kind == "summary")
    lines = [entry_line(e.content, e.speaker) for e in covered if e.kind != "summary"]
    return compaction_messages(bank.compaction_prompt or "", previous, lines, budget_tokens)


def check_summary(text: str, budget_tokens: int, *, slack: float) -> str:
    """Return the usable summary text; ProviderError if it is empty or far over budget."""
    cleaned = text.strip()
    body = cleaned.removeprefix(EXTRACTIVE_LABEL).strip()
    if not body:
        raise ProviderError("the summarizer returned an empty summary; nothing was deleted")
    size = count_tokens(cleaned)
    if size > budget_tokens * slack:
        raise ProviderError(
            f"the summary is {size} tokens, over {slack:g}x its budget of {budget_tokens}; "
            "nothing was deleted"
        )
    return cleaned


def summarize(
    completer: Completer,
    bank: Bank,
    covered: Sequence[Entry],
    budget_tokens: int,
    *,
    slack: float,
) -> str:
    """Return a checked summary of `covered` (previous summaries carried forward)."""
    try:
        reply = completer.complete(build_messages(bank, covered, budget_tokens))
    except OSError as exc:  # timeouts and connection errors a completer did not wrap
        raise ProviderError(f"the summarizer failed: {exc}") from exc
    if not isinstance(reply, str):
        raise ProviderError(f"the summarizer returned {type(reply).__name__}, not text")
    return check_summary(reply, budget_tokens, slack=slack)
