"""Plain-text facts for the heuristic judge: sentences, numbers, names, dates, content words."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_LABEL_LINE = re.compile(r"^\s*\[[^\]\n]{1,60}\]\s*$")
"""A label line such as "[extractive summary]": not part of what the summary says."""
_SPEAKER = re.compile(r"^(?P<speaker>[^\s:<>\[\]][^:\n]{0,40}?):\s+(?P<text>\S.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?;])[\"')\]]*\s+")
_BULLET = re.compile(r"^\s*(?:[-*•‣–]|\d{1,2}[.)])\s+")
_WORD = re.compile(r"[A-Za-z][\w'’-]*|\d[\d,.:/]*\d|\d")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,.:/]*\d(?!\w)|(?<![\w.])\d(?!\w)|\d+(?=st|nd|rd|th\b)")
_MONTHS = "january february march april may june july august september october november december"
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
DATE_WORDS = frozenset(f"{_MONTHS} {_DAYS}".split())
_STOPWORD_TEXT = """
    a an the and or but if then so of to in on at by for with from about as into over after
    before up down out off than too very just really also still even ever again here there
    when where why how what which who whom whose this that these those it its i me my we our
    us you your he him his she her they them their is am are was were be been being do does
    did have has had can could will would shall should may might must not no yes all any some
    each every both few more most other such own same only oh wow hey hi hello ok okay yeah
    thanks thank please sure well like lot lots thing things stuff way something anything
    everything nothing one much many great awesome amazing cool nice glad i'm it's that's
    don't you're i've we're they're what's there's let's can't didn't doesn't isn't"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_OPENERS_TEXT = """
    overall summary customer customers user users assistant agent agents speaker speakers
    both later then finally also however meanwhile next first second third last today
    currently previously earlier afterwards additionally key main notes note topics discussed
    they she he it we"""
SUMMARY_OPENERS = frozenset(_OPENERS_TEXT.split())
"""Words that often open a summary's sentences and are no names."""
_CAPITALS_TEXT = """
    i i'm i've i'd i'll ok okay mr mrs ms dr st tv ai faq
    the a an and but or so yes no hi hello hey thanks oh wow"""
_COMMON_CAPITALS = frozenset(_CAPITALS_TEXT.split())


@dataclass(frozen=True)
class Line:
    """One line of text, split from its speaker (None when it has none)."""

    speaker: str | None
    text: str


def split_speaker(line: str) -> Line:
    """Return a "speaker: text" line as its speaker and text (speaker None for plain text)."""
    stripped = line.strip()
    match = _SPEAKER.match(stripped)
    if match is None:
        return Line(None, stripped)
    return Line(match["speaker"].strip(), match["text"].strip())


def summary_lines(summary: str) -> list[str]:
    """Return the summary's non-empty lines without label lines ("[extractive summary]")."""
    return [row for row in summary.splitlines() if row.strip() and not _LABEL_LINE.match(row)]


def sentences(text: str) -> list[str]:
    """Return the sentences (and `;`-separated clauses) of one line of text."""
    body = _BULLET.sub("", text.strip())
    return [part.strip() for part in _SENTENCE_END.split(body) if part.strip()]


def words(text: str) -> list[str]:
    """Return the words and numbers of text, lowercased."""
    return [word.lower().strip("'’-") for word in _WORD.findall(text)]


def content_words(text: str) -> list[str]:
    """Return the words of text that carry meaning (not stopwords, numbers included)."""
    return [word for word in words(text) if word and word not in STOPWORDS]


def numbers(text: str) -> set[str]:
    """Return the numbers written in text, normalised ("4,200" and "4200" are the same)."""
    found = set()
    for raw in _NUMBER.findall(text):
        value = raw.rstrip(".,:/").replace(",", "")
        if value:
            found.add(value)
    return found


def names(text: str, known: Iterable[str] = (), *, openers: bool = False) -> set[str]:
    """Return the capitalised words of text that read as names, lowercased.

    A capitalised word counts when it does not open a sentence. One that opens a sentence
    counts when it is in `known` (e.g. the source's speakers), or, with `openers`, when it
    is no stopword nor a usual opener of summaries ("Overall", "Customer"): the caller then
    checks it against the source's words, as "Sorry" or "Then" opening a sentence is no name.
    Month and day names are dates; common capitalised words (`I`, `OK`, ...) are no names.
    """
    found: set[str] = set()
    known_words = {word for name in known for word in words(name)}
    for sentence in sentences(text):
        tokens = re.findall(r"[A-Za-z][\w'’-]*", sentence)
        for index, token in enumerate(tokens):
            lower = _possessive(token.lower().strip("'’-"))
            if not token[0].isupper() or lower in DATE_WORDS or lower in _COMMON_CAPITALS:
                continue
            opener = lower in STOPWORDS or lower in SUMMARY_OPENERS or not openers
            if index == 0 and lower not in known_words and opener:
                continue
            found.add(lower)
    return found


def _possessive(word: str) -> str:
    """Return a name without its possessive ending ("dana's" -> "dana")."""
    for ending in ("'s", "’s"):
        if word.endswith(ending):
            return word[: -len(ending)]
    return word


def dates(text: str) -> set[str]:
    """Return the month and day names in text, lowercased (their numbers are in `numbers`)."""
    return {word for word in words(text) if word in DATE_WORDS}


def is_bullet(line: str) -> bool:
    """Return whether a line is a list item ("- ", "* ", "• ", "1. ")."""
    return bool(_BULLET.match(line))


def word_count(text: str) -> int:
    """Return the number of words and numbers in text."""
    return len(_WORD.findall(text))


def vocabulary(texts: Sequence[str]) -> set[str]:
    """Return every word of texts, lowercased, with possessive endings also dropped."""
    found: set[str] = set()
    for text in texts:
        for word in words(text):
            found.add(word)
            found.add(_possessive(word))
    return found


_LANGUAGE_WORDS = {
    "english": "the and is are was to of you it that with for have not this be my your",
    "french": "le la les et est sont un une des du de que qui pas pour avec je vous nous il",
    "german": "der die das und ist sind ein eine nicht ich sie wir mit für zu von auf den",
    "spanish": "el la los las y es son un una de que no por para con yo usted en del se",
    "italian": "il lo la gli le e è sono un una di che non per con io lei del della",
    "portuguese": "o a os as e é são um uma de que não por para com eu você do da em",
    "dutch": "de het een en is zijn niet ik je wij met voor van op dat die",
}
_LANGUAGE_SETS = {name: frozenset(text.split()) for name, text in _LANGUAGE_WORDS.items()}


def language_of(text: str) -> str | None:
    """Return the language whose common words text uses most ("english", "french", ...), or
    None for a text of under 5 words or one with none of them (a rough profile, offline)."""
    found = [w.lower() for w in re.findall(r"[^\W\d_]+", text)]
    if len(found) < 5:
        return None
    counts = {name: sum(w in words for w in found) for name, words in _LANGUAGE_SETS.items()}
    best = max(counts, key=lambda name: counts[name])
    return best if counts[best] else None


_SUFFIXES = ("ing", "ed", "es", "s")


def stem(word: str) -> str:
    """Return a crude stem of a lowercased word ("refunded", "refunds" -> "refund")."""
    for ending in ("'s", "’s"):
        word = word.removesuffix(ending)
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def stems(texts: Sequence[str]) -> set[str]:
    """Return the stems of every word of `texts`."""
    return {stem(word) for text in texts for word in words(text)}
