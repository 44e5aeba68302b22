"""The session-summary merge, a functional core in the style of langmem's `summarize_messages`:
the running summary and the new exchange in, the new summary and the covered message ids out.

No storage, no clock: `session` loads the messages and the running summary, calls
`merge_session`, and stores the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memory.compaction.plan import SUMMARY_SLACK
from memory.compaction.summarizer import check_summary
from memory.errors import InvalidInput, ProviderError
from memory.ports import Completer
from memory.providers.tokens import count_tokens, truncate

TokenCounter = Callable[[str], int]


@dataclass(frozen=True)
class SessionMessage:
    """One message of an ended conversation, as the merge sees it."""

    id: str
    """The message's id (its working-memory turn id): what `covered_message_ids` lists."""
    speaker: str
    """Who said it (the user's id, the agent's, or the tool's name)."""
    content: str
    """What was said; empty for a message with nothing to summarize (a tool's result),
    which is still covered."""


@dataclass(frozen=True)
class RunningSummary:
    """The rolling summary so far and what it already covers."""

    summary: str
    """The summary text (the offline summarizer labels its output on the first line)."""
    covered_message_ids: frozenset[str] = field(default_factory=frozenset)
    """Ids of every message merged into `summary`; a message listed here is never merged
    again, so a conversation ended (or a merge retried) twice counts once."""


@dataclass(frozen=True)
class MergeResult:
    """What one merge produced."""

    summary: str
    """The new rolling summary, within `max_tokens`."""
    covered_message_ids: frozenset[str]
    """Every message id the new summary covers: the running summary's and the new ones."""
    merged_message_ids: tuple[str, ...]
    """The ids merged by this call, in order (empty: nothing new, `summary` unchanged)."""


def merge_session(
    messages: Sequence[SessionMessage],
    *,
    running_summary: RunningSummary | None,
    completer: Completer,
    max_tokens: int,
    instructions: str,
    token_counter: TokenCounter = count_tokens,
) -> MergeResult:
    """Return the running summary with the messages it does not cover yet merged in.

    Args:
        messages: The ended conversation's messages, oldest first (some may be covered).
        running_summary: The user x agent summary so far, or None for the first merge.
        completer: Writes the merged summary (any litellm model or the offline extractive
            summarizer), asked through the compaction prompt files.
        max_tokens: The most tokens the summary may take.
        instructions: What the summary is for (the `session_merge` prompt file's text).
        token_counter: Counts tokens of the summary.

    Returns:
        The result; with nothing new to merge, the running summary unchanged.

    Raises:
        InvalidInput: `max_tokens` is under 16.
        ProviderError: the completer failed or returned an empty or far too long summary.
    """
    from memory.prompts import compaction_messages, entry_line

    if max_tokens < 16:
        raise InvalidInput(f"max_tokens must be at least 16, got {max_tokens}")
    covered = running_summary.covered_message_ids if running_summary else frozenset()
    previous = running_summary.summary if running_summary else ""
    fresh = [m for m in dict((m.id, m) for m in messages).values() if m.id not in covered]
    if not fresh:
        return MergeResult(previous, covered, ())
    merged = tuple(m.id for m in fresh)
    lines = [entry_line(m.content, m.speaker) for m in fresh if m.content.strip()]
    if not lines:  # only messages with nothing to tell (tool results): covered, unchanged
        return MergeResult(previous, covered | frozenset(merged), merged)
    prompt = compaction_messages(instructions, previous, lines, max_tokens)
    try:
        reply = completer.complete(prompt)
    except OSError as exc:  # a timeout or connection error the completer did not wrap
        raise ProviderError(f"the session summarizer failed: {exc}") from exc
    summary = truncate(
        check_summary(reply, max_tokens, slack=SUMMARY_SLACK), max_tokens, count=token_counter
    )
    return MergeResult(summary, covered | frozenset(merged), merged)
