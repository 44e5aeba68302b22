"""The compaction diff: which planted facts a compacted text kept, dropped or contradicted.

A fact is kept when its value appears in the text (numbers compared by digits, dates by the
day they name, names and preferences case-insensitively). It is contradicted when, without
its value, a sentence naming its subject states another value of the same kind: another
number or date, another full name, or (for a preference) `subject is X` with another X.
Otherwise it was dropped. A contradiction records the sentence that made it (`said`). An
updated fact (`previous`: a planted update) is kept only with its latest value: the old value
stated alone contradicts it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from memory.prompt_lab.records import FactDiff, PlantedFact

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_FIRST = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_DAY_FIRST = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b", re.I
)
_NUMBER = re.compile(r"(?<![\w-])\d[\d,]*(?:\.\d+)?(?![\w-])")
_NAME = re.compile(r"\b[A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+)+\b")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_STATED = r"\s*(?:is|are|was|were|:|=|changed to|is now|now)\s+(?P<stated>[^.,;!?\n]+)"


def fact_diff(facts: Sequence[PlantedFact], text: str) -> FactDiff:
    """Return which of `facts` the compacted `text` (summary and surviving entries) kept."""
    kept: list[PlantedFact] = []
    dropped: list[PlantedFact] = []
    contradicted: list[PlantedFact] = []
    said: list[str] = []
    sentences = sentences_of(text)
    for fact in facts:
        if has_value(fact, text):
            kept.append(fact)
            continue
        against = [s for s in sentences if _names_subject(fact, s) and _contradicts(fact, s)]
        if against:
            contradicted.append(fact)
            said.append(against[0])
        else:
            dropped.append(fact)
    return FactDiff(kept=kept, dropped=dropped, contradicted=contradicted, said=said)


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def dates_in(text: str) -> set[date]:
    """Return the calendar days `text` names (ISO, `March 14, 2026`, `14 March 2026`)."""
    found: set[date] = set()
    candidates = [(int(y), int(m), int(d)) for y, m, d in _ISO_DATE.findall(text)]
    candidates += [(int(y), _MONTHS[m.lower()], int(d)) for m, d, y in _MONTH_FIRST.findall(text)]
    candidates += [(int(y), _MONTHS[m.lower()], int(d)) for d, m, y in _DAY_FIRST.findall(text)]
    for year, month, day in candidates:
        try:
            found.add(date(year, month, day))
        except ValueError:
            continue
    return found


def numbers_in(text: str) -> set[str]:
    """Return the numbers of `text` without thousands separators (`48,213` is `48213`)."""
    return {match.replace(",", "") for match in _NUMBER.findall(text)}


def sentences_of(text: str) -> list[str]:
    """Return the sentences of `text` (split at sentence ends, `;` and line breaks)."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def has_value(fact: PlantedFact, text: str) -> bool:
    """Return whether `text` states the fact's value (numbers by digits, dates by day)."""
    if fact.kind == "number" and numbers_in(fact.value):
        return bool(numbers_in(fact.value) & numbers_in(text))
    if fact.kind == "date" and dates_in(fact.value):
        return bool(dates_in(fact.value) & dates_in(text))
    return _fold(fact.value) in _fold(text)


def _names_subject(fact: PlantedFact, sentence: str) -> bool:
    return _fold(fact.text) in _fold(sentence)


def _without_subject(fact: PlantedFact, sentence: str) -> str:
    pattern = r"\s+".join(re.escape(word) for word in fact.text.split())
    return re.sub(pattern, " ", sentence, flags=re.I)


def _contradicts(fact: PlantedFact, sentence: str) -> bool:
    """Return True when `sentence` (naming the fact's subject) states another value."""
    rest = _without_subject(fact, sentence)
    if fact.kind == "number":
        return bool(numbers_in(rest) - numbers_in(fact.value))
    if fact.kind == "date":
        return bool(dates_in(rest) - dates_in(fact.value))
    if fact.kind == "name":
        subject = _fold(fact.text)
        return any(_fold(name) not in subject for name in _NAME.findall(rest))
    pattern = r"\s+".join(re.escape(word) for word in fact.text.split()) + _STATED
    stated = re.search(pattern, sentence, flags=re.I)
    return stated is not None and _fold(fact.value) not in _fold(stated["stated"])
