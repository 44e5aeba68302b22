"""The heuristic check of a prompt's own instructions: limits, format, what to keep or drop.

Only instructions a program can check are looked for, as `memory.judge.rules` reads them
(the offline summarizer follows the same reading): a length limit ("under 100 words", "write
one sentence", "3 bullet points"), bullet points, keeping or dropping names / numbers /
dates, dropping greetings, small talk or a topic, the output language. The score is the mean
of the checks found; the reason lists every check and its result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory.judge import text as t
from memory.judge.records import RunScore
from memory.judge.rules import Limit, parse_rules
from memory.providers.tokens import count_tokens

CHECKED = (
    "word/token/sentence/line/bullet limits, bullet points, keeping or dropping names, "
    "numbers or dates, dropping greetings, small talk or a topic, the output language"
)
_PLEASANTRY = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|bye|good ?bye|see you|take care|talk soon|how are you|"
    r"good (?:morning|afternoon|evening)|nice to (?:meet|see) you|you're welcome|no problem)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Check:
    """One checked instruction: what it says, its score in [0, 1], what was found."""

    what: str
    score: float
    detail: str


def check_instructions(prompt: str | None, source: Sequence[str], summary: str) -> RunScore:
    """Return the instructions criterion: the checkable instructions of `prompt`, checked."""
    if prompt is None or not prompt.strip():
        return RunScore(
            name="instructions",
            score=0.0,
            reason="",
            error="no prompt given: the prompt's instructions were not judged (give the prompt)",
        )
    checks = checks_of(prompt, source, summary)
    if not checks:
        return RunScore(
            name="instructions",
            score=0.0,
            reason="",
            error=f"the prompt has no instruction the heuristic judge can check (it checks "
            f"{CHECKED})",
        )
    score = sum(c.score for c in checks) / len(checks)
    reason = "checked: " + "; ".join(f"{c.what}: {c.detail}" for c in checks)
    return RunScore(name="instructions", score=score, reason=reason)


def checks_of(prompt: str, source: Sequence[str], summary: str) -> list[Check]:
    """Return every checkable instruction of `prompt` (`parse_rules`), checked on `summary`."""
    rules = parse_rules(prompt)
    lines = t.summary_lines(summary)
    body = "\n".join(lines)
    checks = [_limit(limit, body, lines) for limit in rules.limits]
    limits_bullets = any(limit.unit in {"bullet", "point"} for limit in rules.limits)
    if rules.bullets and not limits_bullets:
        bullets = sum(t.is_bullet(row) for row in lines)
        detail = f"{bullets} of {len(lines)} lines are bullets"
        checks.append(Check("bullet points", bullets / max(len(lines), 1), detail))
    checks.extend(_kept(kind, source, summary) for kind in rules.keep)
    checks.extend(_dropped(kind, source, lines) for kind in rules.drop)
    if rules.drop_greetings:
        checks.append(_no_greetings(lines))
    if rules.topics:
        checks.append(_no_topic(rules.topics, lines))
    if rules.language is not None:
        checks.append(_language(rules.language, body))
    return checks


def size_in(unit: str, body: str, lines: Sequence[str]) -> int:
    """Return the size of a summary (`body`, its `lines`) in words, tokens, sentences, lines
    or bullets, as a length limit counts it."""
    if unit == "word":
        return t.word_count(body)
    if unit == "token":
        return count_tokens(body)
    if unit == "sentence":
        return sum(len(t.sentences(t.split_speaker(row).text)) for row in lines)
    if unit == "line":
        return len(lines)
    return sum(t.is_bullet(row) for row in lines)


def _limit(limit: Limit, body: str, lines: list[str]) -> Check:
    count = size_in(limit.unit, body, lines)
    ok = limit.holds(count)
    over = max(count - limit.count + (1 if limit.strict else 0), 0)
    score = 1.0 if ok else max(0.0, 1.0 - over / max(limit.count, 1))
    return Check(limit.what, score, f"{count} ({'ok' if ok else 'over'})")


def holding(kind: str, text: str, speakers: Sequence[str] = ()) -> set[str]:
    """Return the names, numbers or dates (`kind`) a text holds, as the judge finds them."""
    if kind == "names":
        return t.names(text, speakers)
    if kind == "numbers":
        return t.numbers(text)
    return t.dates(text) | {n for n in t.numbers(text) if _looks_dated(n)}


def _dropped(kind: str, source: Sequence[str], lines: list[str]) -> Check:
    speakers = sorted({s for s in (t.split_speaker(row).speaker for row in source) if s})
    units = [s for row in lines for s in t.sentences(row)]
    holding_units = [u for u in units if holding(kind, u, speakers)]
    if kind == "names":  # a "speaker:" prefix names someone too
        holding_units += [row for row in lines if t.split_speaker(row).speaker]
    share = len(holding_units) / max(len(units), 1)
    detail = f"{len(holding_units)} of {len(units)} sentences hold {kind}"
    return Check(f"drop {kind}", max(0.0, 1.0 - share), detail)


def _no_topic(topics: Sequence[str], lines: list[str]) -> Check:
    units = [s for row in lines for s in t.sentences(row)]
    said = [u for u in units if any(w.startswith(tuple(topics)) for w in t.words(u))]
    detail = f"{len(said)} of {len(units)} sentences mention {', '.join(topics)}"
    return Check(f"drop {' '.join(topics)}", 1.0 - len(said) / max(len(units), 1), detail)


def _language(language: str, body: str) -> Check:
    found = t.language_of(body)
    detail = f"written in {found or 'an undetected language'}"
    return Check(f"in {language}", 1.0 if found == language else 0.0, detail)


def _kept(kind: str, source: Sequence[str], summary: str) -> Check:
    lines = [t.split_speaker(row) for row in source]
    speakers = {line.speaker.lower() for line in lines if line.speaker}
    texts = [line.text for line in lines]
    summary_text = "\n".join(t.summary_lines(summary))
    if kind == "names":
        wanted = set().union(*(t.names(text, speakers) for text in texts)) | speakers
        have = t.vocabulary([summary_text])
    elif kind == "numbers":
        wanted = set().union(*(t.numbers(text) for text in texts))
        have = t.numbers(summary_text)
    else:
        wanted = set().union(*(t.dates(text) | t.numbers(text) for text in texts))
        wanted = {item for item in wanted if item in t.DATE_WORDS or _looks_dated(item)}
        have = t.dates(summary_text) | t.numbers(summary_text)
    if not wanted:
        return Check(f"keep {kind}", 1.0, f"the source has no {kind}")
    kept = wanted & have
    return Check(f"keep {kind}", len(kept) / len(wanted), f"{len(kept)} of {len(wanted)} kept")


def _looks_dated(number: str) -> bool:
    """Return whether a number reads as a year, a date or a time (2023, 5/7, 10:30)."""
    return bool(
        re.fullmatch(r"(?:19|20)\d\d|\d{1,4}[/.-]\d{1,2}(?:[/.-]\d{1,4})?|\d{1,2}:\d\d", number)
    )


def _no_greetings(lines: list[str]) -> Check:
    units = [s for row in lines for s in t.sentences(t.split_speaker(row).text)]
    chatty = [u for u in units if _PLEASANTRY.match(u) or not t.content_words(u)]
    detail = f"{len(chatty)} of {len(units)} sentences are greetings or small talk"
    return Check("drop greetings", 1.0 - len(chatty) / max(len(units), 1), detail)
