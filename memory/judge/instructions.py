"""The heuristic check of a prompt's own instructions: limits, format, what to keep or drop.

Only instructions a program can check are looked for, each in plain words: a length limit
("under 100 words", "at most 5 sentences", "no more than 200 tokens", "3 bullet points"),
bullet points, keeping names / numbers / dates, and dropping greetings or small talk. The
score is the mean of the checks found; the reason lists every check and its result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory.judge import text as t
from memory.judge.records import RunScore
from memory.providers.tokens import count_tokens

CHECKED = (
    "word/token/sentence/line/bullet limits, bullet points, keeping names, numbers or dates, "
    "dropping greetings or small talk"
)
_LIMIT = re.compile(
    r"\b(?P<how>under|below|at most|no more than|not more than|fewer than|less than|"
    r"maximum(?: of)?|max\.?|up to|within|in)\s+(?P<n>\d{1,6})\s+"
    r"(?P<unit>words?|tokens?|sentences?|lines?|bullet(?: points?)?|bullets|points)\b",
    re.IGNORECASE,
)
_BULLETS = re.compile(r"\bbullet(?:s|ed| points?| list)?\b|\bas a list\b", re.IGNORECASE)
_KEEP = re.compile(
    r"\b(?:keep|preserve|include|retain|mention|note|record|list|capture|track|verbatim|"
    r"must have|always)\b",
    re.IGNORECASE,
)
_DROP = re.compile(
    r"\b(?:drop|omit|remove|exclude|ignore|skip|leave out|no|without|avoid)\b[^.;]*"
    r"\b(?:greetings?|small talk|pleasantries|chit-?chat|filler|thanks)\b",
    re.IGNORECASE,
)
_KINDS = {
    "names": re.compile(r"\bnames?\b|\bwho\b|\bpeople\b", re.IGNORECASE),
    "numbers": re.compile(
        r"\bnumbers?\b|\bamounts?\b|\bfigures?\b|\bprices?\b|\bquantit\w+|\bids?\b",
        re.IGNORECASE,
    ),
    "dates": re.compile(r"\bdates?\b|\bdeadlines?\b|\btimes?\b|\bwhen\b", re.IGNORECASE),
}
_PLEASANTRY = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|bye|good ?bye|see you|take care|talk soon|how are you|"
    r"good (?:morning|afternoon|evening)|nice to (?:meet|see) you|you're welcome|no problem)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Check:
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
    checks = _checks(prompt, source, summary)
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


def _checks(prompt: str, source: Sequence[str], summary: str) -> list[_Check]:
    lines = t.summary_lines(summary)
    body = "\n".join(lines)
    checks = [_limit(match, body, lines) for match in _LIMIT.finditer(prompt)]
    limits_bullets = any("bullet" in c.what or "point" in c.what for c in checks)
    if _BULLETS.search(prompt) and not limits_bullets:
        bullets = sum(t.is_bullet(row) for row in lines)
        detail = f"{bullets} of {len(lines)} lines are bullets"
        checks.append(_Check("bullet points", bullets / max(len(lines), 1), detail))
    clauses = re.split(r"[.;\n]", prompt)
    for kind, pattern in _KINDS.items():
        if any(_KEEP.search(c) and pattern.search(c) and not _DROP.search(c) for c in clauses):
            checks.append(_kept(kind, source, summary))
    if _DROP.search(prompt):
        checks.append(_no_greetings(lines))
    return checks


def _limit(match: re.Match[str], body: str, lines: list[str]) -> _Check:
    limit = int(match["n"])
    unit = match["unit"].lower()
    strict = match["how"].lower() in {"under", "below", "fewer than", "less than"}
    if unit.startswith("word"):
        count = t.word_count(body)
    elif unit.startswith("token"):
        count = count_tokens(body)
    elif unit.startswith("sentence"):
        count = sum(len(t.sentences(row)) for row in lines)
    elif unit.startswith("line"):
        count = len(lines)
    else:
        count = sum(t.is_bullet(row) for row in lines)
    ok = count < limit if strict else count <= limit
    over = max(count - limit + (1 if strict else 0), 0)
    score = 1.0 if ok else max(0.0, 1.0 - over / max(limit, 1))
    what = f"{match['how'].lower()} {limit} {unit}"
    return _Check(what, score, f"{count} ({'ok' if ok else 'over'})")


def _kept(kind: str, source: Sequence[str], summary: str) -> _Check:
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
        return _Check(f"keep {kind}", 1.0, f"the source has no {kind}")
    kept = wanted & have
    return _Check(f"keep {kind}", len(kept) / len(wanted), f"{len(kept)} of {len(wanted)} kept")


def _looks_dated(number: str) -> bool:
    """Return whether a number reads as a year, a date or a time (2023, 5/7, 10:30)."""
    return bool(
        re.fullmatch(r"(?:19|20)\d\d|\d{1,4}[/.-]\d{1,2}(?:[/.-]\d{1,4})?|\d{1,2}:\d\d", number)
    )


def _no_greetings(lines: list[str]) -> _Check:
    units = [s for row in lines for s in t.sentences(t.split_speaker(row).text)]
    chatty = [u for u in units if _PLEASANTRY.match(u) or not t.content_words(u)]
    detail = f"{len(chatty)} of {len(units)} sentences are greetings or small talk"
    return _Check("drop greetings", 1.0 - len(chatty) / max(len(units), 1), detail)
