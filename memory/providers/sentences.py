"""Sentences of a summary and whether each reads as a sentence or as a fragment.

A fragment has no verb, or starts with a dangling conjunction ("and", "because", "which"):
the offline summarizer avoids them and bench/compaction_quality.py counts them. The verb
test is a heuristic (no part-of-speech model ships offline): a word from a list of common
verbs and auxiliaries, a contraction ("I'm", "she's"), or a word ending in -ed or -ing.
"""

from __future__ import annotations

import re

_SPEAKER = re.compile(r"^(?P<speaker>[^\s:<>\[\]][^:\n]{0,40}?):\s+(?P<content>\S.*)$")
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_DANGLING_TEXT = "and or but nor because which whereas although though while who whom whose unless"
_DANGLING = frozenset(_DANGLING_TEXT.split())
_AUXILIARY_TEXT = """
    am is are was were be been being have has had having do does did done will would shall
    should can could may might must ain't isn't aren't wasn't weren't don't doesn't didn't
    won't wouldn't can't couldn't shouldn't hasn't haven't hadn't let's
    went gone got gotten made took taken saw seen came gave given knew known thought felt
    found told kept ran brought bought built left met paid sent sat stood began begun wrote
    written heard meant became grew grown shown taught learnt drew drawn lost held said
"""
_AUXILIARIES = frozenset(_AUXILIARY_TEXT.split())
_BASE_VERBS = """
    go get make take see come give know think feel find want need like love hate say tell ask
    keep let put run bring buy build leave meet pay send set sit stand begin write read lose
    hold hear mean become grow show try use work play live move help start call look seem
    turn ship own hope plan agree decide enjoy visit join teach learn draw paint open close
    stay wait cost arrive rattle leak prefer remember forget change add blend matter inspire
    boost lead sound mean fit include involve cover miss win eat drink cook bake sing dance
    travel walk drive ride fly swim climb hike camp adopt support care share post watch
    listen spend save create design finish complete receive deliver order return replace
    fix break repair check confirm cancel book schedule attend happen feature remind believe
    wish guess imagine understand explain describe discuss talk speak chat reply answer
    offer suggest recommend encourage appreciate thank celebrate volunteer study practice
    improve manage handle pick choose carry stop continue keep grab focus relax rest sleep
    wake dream smile laugh cry worry miss reach connect raise sell rent host serve
"""
_VERBS = _AUXILIARIES | frozenset(
    form
    for base in _BASE_VERBS.split()
    for form in (base, base + "s", base + "es", base[:-1] + "ies" if base.endswith("y") else base)
)
_SECOND_PERSON_TEXT = "you you're you've you'll you'd your yours yourself yourselves"
_SECOND_PERSON = frozenset(_SECOND_PERSON_TEXT.split())
_FIRST_PERSON_TEXT = "i i'm i've i'll i'd me my mine myself we we're we've we'll we'd us our ours"
_FIRST_PERSON = frozenset(_FIRST_PERSON_TEXT.split())
_NUMBER_TEXT = """
    two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
    hundred thousand million billion dozen"""
_NUMBER_WORDS = frozenset(_NUMBER_TEXT.split())
_CONTRACTION = re.compile(r"^\w+['’](?:m|s|re|ve|ll|d)$", re.IGNORECASE)


def split_speaker(line: str) -> tuple[str | None, str]:
    """Return (speaker, content) for a "Speaker: content" line, or (None, line)."""
    match = _SPEAKER.match(line.strip())
    if match is None or len(match["speaker"].split()) > 4:
        return None, line.strip()
    return match["speaker"].strip(), match["content"].strip()


def sentences(summary: str) -> list[str]:
    """Return the sentences of a summary (label and speaker prefixes left out)."""
    found: list[str] = []
    for line in summary.splitlines():
        line = line.strip()
        if not line or (line.startswith("[") and line.endswith("]")):
            continue
        _, content = split_speaker(line)
        found.extend(p.strip() for p in SENTENCE_END.split(content) if p.strip(" .;,"))
    return found


def has_verb(text: str) -> bool:
    """Return whether a text holds a word that reads as a verb (see the module docstring)."""
    for word in _WORD.findall(text):
        lower = word.lower().replace("’", "'")
        if lower in _VERBS or _CONTRACTION.match(lower):
            return True
        if len(lower) > 4 and lower.endswith(("ed", "ing")):
            return True
    return False


def is_fragment(text: str) -> bool:
    """Return whether a sentence has no verb or starts with a dangling conjunction."""
    words = _WORD.findall(text)
    if not words:
        return True
    return words[0].lower() in _DANGLING or not has_verb(text)


def fragment_share(summary: str) -> float:
    """Return the share of a summary's sentences that are fragments (0.0 when it has none)."""
    found = sentences(summary)
    return sum(map(is_fragment, found)) / len(found) if found else 0.0


def addressed(text: str) -> bool:
    """Return whether a sentence speaks of the listener and not of the speaker: a
    second-person word ("you", "your") and no first-person one ("You've got guts." is,
    "I told you about it." is not)."""
    words = {word.lower().replace("’", "'") for word in _WORD.findall(text)}
    return bool(words & _SECOND_PERSON) and not words & _FIRST_PERSON


def is_number(word: str, *, words: bool = True) -> bool:
    """Return whether a word is a number, in digits ("3", "2024-03-02") or, with `words`, in
    words ("three", "dozen"; not "one", which is as often a pronoun)."""
    return any(c.isdigit() for c in word) or (words and word.lower() in _NUMBER_WORDS)
