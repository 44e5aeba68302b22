"""A ranking rule for conversation turns that carry the turn before them in their index text:
a carrier whose own text has none of the query's words ranks just below the turn it carries
(the reply after "Any dinner tips?" should not outrank the question itself)."""

from __future__ import annotations

import math
import re
from typing import Any

Row = dict[str, Any]


_WORD = re.compile(r"\w+")
_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "had",
        "has",
        "have",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
    ]
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP_WORDS}


def carriers_after_their_turns(ranked: list[Row], query: str) -> list[Row]:
    """Return `ranked` with each turn that matches only through the turn it carries (its
    `carries`, another hit; none of the query's words in its own text) scored just below
    that hit when it was above it.

    A reply's full-text row also holds the turn before it, so a short reply ("oh no") can
    outscore the long turn that holds the query's words; the reply stays a hit (it is what
    answered), but after the turn it carries.
    """
    asked = _words(query)
    score = {row["id"]: float(row["_score"]) for row in ranked}
    changed = False
    for row in ranked:
        carried = score.get(row.get("carries") or "")
        if carried is None or asked & _words(str(row.get("chunk_text") or "")):
            continue
        if float(row["_score"]) >= carried:
            row["_score"] = math.nextafter(carried, -math.inf)
            score[row["id"]] = row["_score"]
            changed = True
    if not changed:
        return ranked
    return sorted(ranked, key=lambda r: (-float(r["_score"]), r["id"]))
