"""The one parser of a compaction prompt's checkable instructions, in plain words.

`parse_rules` reads what a program can act on or check: length limits ("under 100 words",
"at most 5 sentences", "write one short sentence", "3 bullet points"), bullet points,
keeping names / numbers / dates, dropping them ("Drop all numbers and names."), dropping
greetings or small talk, dropping a topic ("Leave out anything about the weather."), and the
output language ("Write in French."). The heuristic judge checks these
(`memory.judge.instructions`) and the offline summarizer follows them
(`memory.providers.extractive`): one reading of the prompt for both. Sentences of the prompt
that match no rule are returned as `unread` (only an LLM reads them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Kind = str
"""One of KINDS: "names", "numbers", "dates"."""

_NUMBER_WORDS = {
    "a": 1, "an": 1, "a single": 1, "one": 1, "single": 1, "two": 2, "three": 3, "four": 4,
    "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12,
    "fifteen": 15, "twenty": 20, "fifty": 50, "hundred": 100,
}  # fmt: skip
_COUNT = r"\d{1,6}|a single|an?|one|single|two|three|four|five|six|seven|eight|nine|ten|" + (
    r"twelve|fifteen|twenty|fifty|hundred"
)
_UNIT = r"words?|tokens?|sentences?|lines?|bullet(?: points?)?|bullets|points|paragraphs?"
_NOT_EACH = r"(?!\s+(?:per|for each|each|about)\b)"
_LIMIT = re.compile(
    rf"\b(?P<how>under|below|at most|no more than|not more than|fewer than|less than|"
    rf"maximum(?: of)?|max\.?|up to|within|in)\s+(?P<n>{_COUNT})\s+"
    rf"(?:(?:short|brief|concise|plain|simple|single)\s+)?(?P<unit>{_UNIT})\b{_NOT_EACH}",
    re.IGNORECASE,
)
_WRITE = re.compile(  # "Write one short sentence", "Reply with two sentences", "Use 3 bullets"
    rf"\b(?P<how>write|reply with|answer with|use|give|return|produce|output|as)\s+"
    rf"(?:(?:only|just|exactly)\s+)?(?P<n>{_COUNT})\s+"
    rf"(?:(?:short|brief|concise|plain|simple|single)\s+)?(?P<unit>{_UNIT})\b{_NOT_EACH}",
    re.IGNORECASE,
)
_BULLETS = re.compile(r"\bbullet(?:s|ed| points?| list)?\b|\bas a list\b", re.IGNORECASE)
_KEEP = re.compile(
    r"\b(?:keep|preserve|include|retain|mention|note|record|list|capture|track|verbatim|"
    r"must have|always)\b",
    re.IGNORECASE,
)
_DROP_VERB = (
    r"\b(?:drop|discard|omit|remove|exclude|ignore|skip|leave out|strip|without|avoid|"
    r"never (?:mention|include|keep)|do not (?:mention|include|keep)|"
    r"don't (?:mention|include|keep)|no)\b"
)
_GREETINGS = re.compile(
    r"\b(?:greetings?|small talk|pleasantries|chit-?chat|filler|thanks)\b", re.IGNORECASE
)
_DROP = re.compile(_DROP_VERB + r"[^.;]*" + _GREETINGS.pattern, re.IGNORECASE)
_DROPPING = re.compile(_DROP_VERB, re.IGNORECASE)
KINDS = {
    "names": re.compile(r"\bnames?\b|\bwho\b|\bpeople\b", re.IGNORECASE),
    "numbers": re.compile(
        r"\bnumbers?\b|\bamounts?\b|\bfigures?\b|\bprices?\b|\bquantit\w+|\bids?\b",
        re.IGNORECASE,
    ),
    "dates": re.compile(r"\bdates?\b|\bdeadlines?\b|\btimes?\b|\bwhen\b", re.IGNORECASE),
}
_TOPIC = re.compile(
    r"\b(?:drop|omit|remove|exclude|ignore|skip|leave out|never mention|do not mention|"
    r"don't mention|avoid)\s+(?:(?:any|all|every)(?:thing)?\s+)?(?:(?:about|on|regarding|"
    r"concerning|mentions? of|talk of|discussions? (?:of|about)|the topic of|the subject of)\s+)?"
    r"(?P<topic>[^.;,\n]{2,60})",
    re.IGNORECASE,
)
_TOPIC_FILLER_TEXT = """
    the a an any all every anything everything about on of regarding concerning mention
    mentions talk discussion discussions topic topics subject part parts details detail and
    or that which is are it its them other duplicates repetition"""
_TOPIC_FILLER = frozenset(_TOPIC_FILLER_TEXT.split())
LANGUAGES = ("english", "french", "german", "spanish", "italian", "portuguese", "dutch")
_LANGUAGE = re.compile(
    rf"\b(?:in|into|language:?|translate(?:d)? (?:it )?(?:in)?to)\s+(?P<language>"
    rf"{'|'.join(LANGUAGES)})\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Limit:
    """A length limit: at most `count` (`strict`: fewer than) words, tokens, sentences,
    lines or bullets (`unit`, singular)."""

    what: str
    """As the prompt says it, e.g. "under 100 words", "one sentence"."""
    count: int
    unit: str
    strict: bool

    def holds(self, size: int) -> bool:
        """Return whether a summary of `size` units keeps to the limit."""
        return size < self.count if self.strict else size <= self.count


@dataclass(frozen=True)
class Rules:
    """A prompt's checkable instructions (see the module docstring)."""

    limits: tuple[Limit, ...] = ()
    bullets: bool = False
    keep: tuple[Kind, ...] = ()
    drop: tuple[Kind, ...] = ()
    drop_greetings: bool = False
    topics: tuple[str, ...] = ()
    """Words of topics to drop, lowercased ("weather", "billing")."""
    language: str | None = None
    """The output language asked for, lowercased ("french"), or None."""
    unread: tuple[str, ...] = field(default=())
    """The prompt's sentences no rule matched (only an LLM follows them)."""

    def __bool__(self) -> bool:
        return bool(
            self.limits or self.bullets or self.keep or self.drop or self.drop_greetings
        ) or bool(self.topics or self.language)


def parse_rules(prompt: str | None) -> Rules:
    """Return the checkable instructions of `prompt` (empty `Rules` for no prompt)."""
    if prompt is None or not prompt.strip():
        return Rules()
    limits = [_limit(m) for pattern in (_LIMIT, _WRITE) for m in pattern.finditer(prompt)]
    limits = list({(x.count, x.unit, x.strict): x for x in limits}.values())
    clauses = [c for c in re.split(r"[.;\n]", prompt) if c.strip()]
    keep: list[Kind] = []
    drop: list[Kind] = []
    topics: list[str] = []
    matched: set[int] = set()
    for index, clause in enumerate(clauses):
        for kind, pattern in KINDS.items():
            if _dropping(clause, pattern):
                drop.append(kind)
                matched.add(index)
            elif _KEEP.search(clause) and pattern.search(clause) and not _DROP.search(clause):
                keep.append(kind)
                matched.add(index)
        topic = _topic(clause)
        if topic:
            topics.extend(topic)
            matched.add(index)
    bullet_limit = any(x.unit in {"bullet", "point"} for x in limits)
    bullets = bool(_BULLETS.search(prompt)) and not bullet_limit
    language = _LANGUAGE.search(prompt)
    for index, clause in enumerate(clauses):
        checkable = (_LIMIT, _WRITE, _BULLETS, _DROP, _LANGUAGE)
        if any(p.search(clause) for p in checkable):
            matched.add(index)
    unread = tuple(
        " ".join(c.split()) for i, c in enumerate(clauses) if i not in matched and c.split()
    )
    return Rules(
        limits=tuple(limits),
        bullets=bullets or bullet_limit,
        keep=tuple(dict.fromkeys(k for k in keep if k not in drop)),
        drop=tuple(dict.fromkeys(drop)),
        drop_greetings=bool(_DROP.search(prompt)),
        topics=tuple(dict.fromkeys(topics)),
        language=language["language"].lower() if language else None,
        unread=unread,
    )


def _limit(match: re.Match[str]) -> Limit:
    raw = match["n"].lower()
    count = int(raw) if raw.isdigit() else _NUMBER_WORDS[" ".join(raw.split())]
    unit = match["unit"].lower().removesuffix("s")
    unit = {"bullet point": "bullet", "bullet": "bullet", "paragraph": "line"}.get(unit, unit)
    how = match["how"].lower()
    strict = how in {"under", "below", "fewer than", "less than"}
    what = f"{how} {match['n']} {match['unit']}".lower() if how not in _WRITE_VERBS else (
        f"{match['n']} {match['unit']}".lower()
    )  # fmt: skip
    return Limit(what=what, count=count, unit=unit, strict=strict)


_WRITE_VERBS = frozenset(
    {"write", "use", "give", "return", "produce", "output", "as", "reply with", "answer with"}
)


def _dropping(clause: str, kind: re.Pattern[str]) -> bool:
    """Return whether the clause tells to drop things of `kind`: a drop verb before the kind
    word and no keep verb between them ("Drop all numbers", "no names"; not "Keep names,
    no greetings")."""
    for verb in _DROPPING.finditer(clause):
        rest = clause[verb.end() :]
        word = kind.search(rest)
        if word is None:
            continue
        between = rest[: word.start()]
        if verb[0].lower() == "no" and between.strip():
            continue  # "no more than 100 words of numbers" is no drop
        if not _KEEP.search(between) and not re.search(r"\b(?:than|more|less)\b", between):
            return True
    return False


def _topic(clause: str) -> list[str]:
    """Return the words of a topic the clause tells to drop (none for kinds and greetings)."""
    match = _TOPIC.search(clause)
    if match is None or _GREETINGS.search(match["topic"]):
        return []
    if any(p.search(match["topic"]) for p in KINDS.values()):
        return []
    words = re.findall(r"[a-z][a-z'-]+", match["topic"].lower())
    return [w for w in words if w not in _TOPIC_FILLER]
