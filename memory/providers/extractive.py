"""The offline extractive summarizer as a `Completer`: called directly, never through litellm.

It reads the compaction prompt's user message (the bank's instructions, previous summary,
entries, token budget; see `memory.prompts`) and returns the extractive summary, labelled
as such on its first line. It follows the instructions a program can act on, read by the
judge's own parser (`memory.judge.rules`): a word, sentence, line or token limit, bullets,
dropping names, numbers, dates or a topic (names dropped: no speaker prefixes either). It
cannot translate, so an output language other than the source's is not followed, and the
prompt's other sentences are read only by an LLM; `following` says which is which per run.
Names, numbers and dates are always favoured, so "keep numbers" changes nothing here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from memory.errors import InvalidInput
from memory.judge import text as t
from memory.judge.instructions import checks_of, holding, size_in
from memory.judge.rules import Rules, parse_rules
from memory.ports import Message
from memory.providers.labels import DEFAULT_COMPLETION_MODEL, OFFLINE_MODELS, describe
from memory.providers.summarize import (
    LABEL,
    Layout,
    extractive_summary,
    parse_compaction_prompt,
    prompt_instructions,
)
from memory.providers.summary_pick import Tuning
from memory.providers.tokens import count_tokens

FollowStatus = Literal["followed", "partly followed", "cannot follow offline", "not read offline"]


class Followed(BaseModel):
    """One instruction of the prompt and what the offline summarizer did with it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instruction: str
    status: FollowStatus
    detail: str


class ExtractiveCompleter:
    """Summarizes a compaction prompt by extraction: no language model, deterministic."""

    model = DEFAULT_COMPLETION_MODEL

    def __init__(self, tuning: Tuning | None = None) -> None:
        self.tuning = tuning
        """The pick's knobs (None: the measured defaults, `summary_pick.TUNING`)."""

    @property
    def label(self) -> str:
        """Return how this completer's output is labelled where it is shown."""
        return describe(self.model)

    def complete(self, messages: Sequence[Message]) -> str:
        """Return the extractive summary the last user message asks for, following the
        bank's checkable instructions (`guided_summary`).

        Raises:
            InvalidInput: no messages, or none with text.
        """
        text = prompt_text(messages)
        previous, lines, budget = parse_compaction_prompt(text)
        return guided_summary(
            prompt_instructions(text), lines, budget, previous_summary=previous, tuning=self.tuning
        )


def guided_summary(
    instructions: str,
    lines: Sequence[str],
    budget_tokens: int,
    *,
    previous_summary: str = "",
    tuning: Tuning | None = None,
) -> str:
    """Return the extractive summary of `lines` within `budget_tokens` that follows the
    checkable `instructions` (see the module docstring); with none, `extractive_summary`.

    A length limit is met by the largest budget (at most `budget_tokens`) whose summary
    keeps to it; when every clause holds what is to be dropped, nothing is dropped (an
    empty summary would make compaction fail), and `following` reports it.
    """
    rules = parse_rules(instructions)
    speakers = sorted({s for s in (t.split_speaker(row).speaker for row in lines) if s})
    layout = Layout(speakers="names" not in rules.drop, bullets=rules.bullets)
    skip = _skipper(rules, speakers)

    def write(budget: int, dropping: Callable[[str], bool] | None = skip) -> str:
        return extractive_summary(
            lines,
            budget,
            previous_summary=previous_summary,
            skip=dropping,
            layout=layout,
            tuning=tuning,
        )

    summary = write(budget_tokens)
    if skip is not None and summary.strip() == LABEL:
        skip = None
        summary = write(budget_tokens, None)
    if not rules.limits or _within(rules, summary):
        return summary
    low, high = count_tokens(LABEL) + 4, budget_tokens - 1
    best = write(low, skip)
    while low <= high:
        middle = (low + high) // 2
        candidate = write(middle, skip)
        if _within(rules, candidate):
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    return best


def _within(rules: Rules, summary: str) -> bool:
    lines = t.summary_lines(summary)
    body = "\n".join(lines)
    return all(limit.holds(size_in(limit.unit, body, lines)) for limit in rules.limits)


def _skipper(rules: Rules, speakers: Sequence[str]) -> Callable[[str], bool] | None:
    """Return the test of a clause the rules say to drop (None when nothing is dropped)."""
    kinds = rules.drop
    topics = rules.topics
    if not kinds and not topics:
        return None

    def skip(text: str) -> bool:
        if any(holding(kind, text, speakers) for kind in kinds):
            return True
        return any(word.startswith(topics) for word in t.words(text)) if topics else False

    return skip


def following(instructions: str, source: Sequence[str], summary: str) -> list[Followed]:
    """Return each instruction of the prompt and whether the offline summary followed it:
    the judge's own checks (`checks_of`), the output language it cannot translate into,
    and the prompt's sentences no rule reads (only an LLM follows them)."""
    rules = parse_rules(instructions)
    notes: list[Followed] = []
    source_language = t.language_of("\n".join(t.split_speaker(row).text for row in source))
    for check in checks_of(instructions, source, summary) if rules else []:
        status: FollowStatus = "followed" if check.score >= 0.999 else "partly followed"
        detail = check.detail
        if check.what.startswith("keep "):
            detail += " (names, numbers and dates are always favoured offline)"
        language = rules.language
        if check.what == f"in {language}" and source_language != language:
            status = "cannot follow offline"
            detail = (
                f"the source is in {source_language or 'an undetected language'}; the "
                "extractive summarizer copies its sentences and cannot translate"
            )
        notes.append(Followed(instruction=check.what, status=status, detail=detail))
    notes.extend(
        Followed(
            instruction=clause,
            status="not read offline",
            detail="no offline rule reads this; only an LLM summarizer follows it",
        )
        for clause in rules.unread
    )
    return notes


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
