"""Offline extractive summarizer: keeps the most informative clauses within a token budget.

No language model is involved. Lines are split into clauses, trimmed of greetings and filler,
and picked greedily by how much new salient content (rare words by IDF over the input,
numbers, dates, names) they add per token. Speakers and kept words stay verbatim, so nothing
is invented; the output starts with a label line so it is never taken for an LLM summary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory.providers import summary_pick
from memory.providers.sentences import SENTENCE_END as _SENTENCE_END
from memory.providers.sentences import addressed, is_fragment, is_number, split_speaker
from memory.providers.summary_pick import Tuning, Unit, pick, unit_value, word_weights
from memory.providers.tokens import count_tokens

LABEL = "[extractive summary]"
"""First line of every extractive summary."""

_CLAUSE_BREAK = re.compile(r"(?<=[,;:])\s+|\s+(?=[-–—]\s)|(?<=\s[-–—])\s+")
_PHRASE_BREAK = re.compile(
    r"\s+(?=(?:in|of|for|with|at|on|to|from|by|and|or|but|that|which|who|because|while|"
    r"after|before|until|since)\s)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z0-9][\w'’&-]*")
_BUDGET_LINE = re.compile(r"^Token budget:\s*(\d+)\s*$", re.MULTILINE)
_TRAILING = ",;:-–— "
_DATE_TEXT = """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
    saturday sunday yesterday today tomorrow week weekend month year"""
_DATE_WORDS = frozenset(_DATE_TEXT.split())
_STOPWORD_TEXT = """
    a an the and or but if then so of to in on at by for with from about as into over
    after before up down out off than too very just really also still even ever again here
    there when where why how what which who whom whose this that these those it its it's
    i i'm i've i'd i'll me my mine myself we we're we've our ours us you you're you've you'd
    you'll your yours he he's him his she she's her hers they they're they've them their
    is am are was were be been being do does did done doing have has had having can could
    will would shall should may might must not no nor don't didn't doesn't isn't aren't
    wasn't weren't can't couldn't won't wouldn't that's there's what's let's it'll
    all any some each every both few more most other such own same only
    yes yeah yep yup oh ooh wow hey hi hello ok okay aw awww haha lol omg hmm um uh
    thanks thank thx please sure well like kinda gonna wanna gotta got get gets getting
    lot lots thing things stuff way something anything everything nothing one ones
    much many soo sooo totally definitely actually absolutely literally basically honestly
    truly super pretty quite always never sometimes often awesome amazing cool great nice
    wonderful fantastic incredible lovely sweet glad exciting"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_PLEASANTRY = re.compile(
    r"^(?:take care|talk (?:to you )?(?:soon|later)|catch you (?:later|soon)|chat (?:soon|later)|"
    r"see you(?: soon| later)?|bye|good ?bye|sounds (?:great|cool|good|awesome|fun|amazing)|"
    r"good luck|have (?:a )?(?:great|good|nice|fun)(?: \w+)?|thanks a (?:bunch|lot|ton)|anytime|"
    r"woo+(?:hoo+)?|woah|yay|long time no see|me too|same here|you too|"
    r"no problem|no worries|(?:you're |you are )?welcome|keep (?:it )?up|way to go|"
    r"(?:it's |it is )?(?:good|nice|great) to (?:see|hear from|meet) you|how are you|"
    r"how have you been|what's up(?: with you)?|how about you|what about you|and you)"
    r"(?:[\s,]+[A-Z][a-z]+)?[\s!.,]*$",
    re.IGNORECASE,
)
_OPENER = re.compile(  # interjections; words that can carry meaning only with punctuation
    r"^(?:(?:(?:hey|hi|hello|wow|whoa|oh|ooh|aw+|yeah|yep|yup|haha|lol|omg|hmm|um|uh)\b"
    r"\s*[,!.:;-]*|(?:yes|no|ok|okay|well|so|thanks|thank you|cool|great|awesome|nice|sure|"
    r"right|totally|absolutely|definitely|congrats|congratulations|sorry|also|anyway)"
    r"(?: so much| a lot)?\s*[,!.:;-]+)\s*)+",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"(?i:\b(?:really|totally|definitely|actually|absolutely|literally|basically|honestly|"
    r"truly|just|so+|very|super|quite|kinda|sort of|kind of|you know|i mean)\b,?\s*)"
)
_VOCATIVE = re.compile(r"(?:^|,\s+)(?P<name>[A-Z][a-z]{2,12})(?=[!?.,]|$)")


def _clauses(content: str) -> list[str]:
    """Return the clauses of content that stand on their own: each sentence cut at its
    commas, semicolons and dashes, a piece with no subject and verb of its own ("owner
    Alice3", "delivered to my office") staying with the clause before it. So every kept
    clause keeps its subject, and numbers keep what they count."""
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(content):
        current = ""
        for part in filter(None, _CLAUSE_BREAK.split(sentence.strip())):
            if current and _stands_alone(part) and _stands_alone(current):
                pieces.append(current)
                current = part
            else:
                current = f"{current} {part}" if current else part
        if current:
            pieces.append(current)
    return pieces


_SUBJECT_TEXT = """
    i you he she it we they this that these those there my your his her our their its
    the a an someone everyone nobody"""
_SUBJECTS = frozenset(_SUBJECT_TEXT.split())


def _stands_alone(clause: str) -> bool:
    """Return whether a clause reads as one: a subject first (a pronoun, a determiner, a
    name or a number) and a verb, no dangling conjunction."""
    words = _WORD.findall(clause)
    if not words or is_fragment(clause):
        return False
    first = words[0]
    return first.lower() in _SUBJECTS or first[0].isupper() or first[0].isdigit()


def _phrases(clause: str, fits: Callable[[str], bool]) -> list[str]:
    """Return a clause too long to fit cut at its punctuation and before prepositions and
    conjunctions.

    A piece of under 3 words joins the one before it only while the joined piece still
    `fits`: joined regardless, "Invoice 7: paid 300 dollars to Acme on 2024-03-02 by Maria"
    is rebuilt whole, still does not fit, and only its leading words (the lead-in) are kept.
    """
    parts = (p for piece in _CLAUSE_BREAK.split(clause) for p in _PHRASE_BREAK.split(piece))
    merged: list[str] = []
    for part in filter(None, parts):
        short = len(part.split()) < 3 or (bool(merged) and len(merged[-1].split()) < 3)
        if merged and short and fits(f"{merged[-1]} {part}"):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged


def _compress(clause: str, names: frozenset[str]) -> str:
    """Return clause without greetings, interjections, filler adverbs and vocatives."""

    def vocative(match: re.Match[str]) -> str:
        name = match["name"].lower()  # a speaker's name or its short form ("Mel")
        return "" if any(n.startswith(name) for n in names) else match[0]

    text = clause.strip()
    for _ in range(3):  # "Hey Mel! Wow, ..." takes a few rounds
        text = _VOCATIVE.sub(vocative, _OPENER.sub("", text)).lstrip(_TRAILING + "!.")
    if _PLEASANTRY.match(text):
        return ""
    text = _FILLER.sub("", text)
    return re.sub(r"\s{2,}", " ", text).strip().lstrip(_TRAILING).rstrip("-–— ")


def _content_words(text: str, names: frozenset[str]) -> list[str]:
    """Return the lowercased content words of text in order (stopwords and speaker names
    removed)."""
    words = []
    for word in _WORD.findall(text):
        lower = word.lower().replace("’", "'")
        if lower not in _STOPWORDS and lower not in names and (len(lower) > 1 or lower.isdigit()):
            words.append(lower)
    return words


def _salient(text: str, words: set[str], number_words: bool) -> frozenset[str]:
    """Return the content words of text that are numbers (in digits or words: "three
    turtles" counts like "3 turtles"), dates or capitalised names."""
    found = set()
    for index, word in enumerate(_WORD.findall(text)):
        lower = word.lower()
        number = is_number(word, words=number_words)
        if lower in words and (number or lower in _DATE_WORDS or (index and word[0].isupper())):
            found.add(lower)
    return frozenset(found)


def _units(
    lines: Sequence[str],
    previous_summary: str,
    *,
    raw: bool = False,
    limit: int | None = None,
    skip: Callable[[str], bool] | None = None,
    number_words: bool = True,
) -> list[Unit]:
    """Return the candidate clauses of the previous summary and the lines, in order.

    A clause whose output line would cost more than `limit` tokens (so it could never be
    picked) is cut into phrases (`_phrases`), which compete like clauses. A clause `skip`
    is true of is left out (what the prompt says to drop).
    """
    sources: list[tuple[str | None, str, bool]] = []
    tagged = [(line, True) for line in previous_summary.splitlines()]
    for line, favoured in tagged + [(line, False) for line in lines]:
        if line.strip() and line.strip() != LABEL:
            sources.append((*split_speaker(" ".join(line.split())), favoured))
    names = frozenset(s.lower() for s, _, _ in sources if s is not None and " " not in s)
    units: list[Unit] = []
    seen: set[tuple[str | None, tuple[str, ...]]] = set()
    mentioned: set[str] = set()
    for group, (speaker, content, favoured) in enumerate(sources):
        prefix = f"{speaker}: " if speaker else ""
        pieces: list[str] = []
        fits = _fits(prefix, limit)
        for clause in _clauses(content):
            text = clause if raw else _compress(clause, names)
            pieces.extend([text] if fits(text) else _phrases(text, fits))
        for text in pieces:
            sequence = (
                [w.lower() for w in _WORD.findall(text)] if raw else _content_words(text, names)
            )
            found = set(sequence)
            words = tuple(sorted(found))
            if not words or (speaker, tuple(sequence)) in seen:
                continue
            if skip is not None and skip(text):
                continue
            fragment = not raw and is_fragment(text)
            if fragment and not _names_a_thing(text) and not _is_request(text):
                continue  # "Sorry.", "Cool setup!": no fact, and not a sentence either
            seen.add((speaker, tuple(sequence)))
            units.append(
                Unit(
                    position=len(units),
                    group=group,
                    speaker=speaker,
                    text=text,
                    words=words,
                    sequence=tuple(sequence),
                    salient=_salient(text, found, number_words),
                    first=frozenset(found - mentioned),
                    favoured=favoured,
                    fragment=fragment,
                    addressed=speaker is not None and addressed(text),
                    line_cost=count_tokens(prefix + text) + 1,
                    join_cost=count_tokens(" " + text),
                )
            )
            mentioned |= found
    return units


_REQUEST = re.compile(r"\?\s*$|\b(?:please|no|not|without|extra|more|less)\b", re.IGNORECASE)
"""A verbless request or constraint ("No onions.", "Extra legroom?", "Aisle seat, please."):
a fragment worth keeping although it names no thing."""


def _is_request(text: str) -> bool:
    """Return whether a short fragment asks for something (see `_REQUEST`)."""
    return len(_WORD.findall(text)) <= 5 and _REQUEST.search(text) is not None


def _names_a_thing(text: str) -> bool:
    """Return whether a text holds a number or a capitalised word that is not a stopword
    (a short answer such as "Lisbon!" or "5 years." carries a fact; "Sorry." does not)."""
    return any(
        any(c.isdigit() for c in word) or (word[0].isupper() and word.lower() not in _STOPWORDS)
        for word in _WORD.findall(text)
    )


def _fits(prefix: str, limit: int | None) -> Callable[[str], bool]:
    """Return a test of whether a text, opening an output line after prefix, fits in limit."""
    return lambda text: limit is None or count_tokens(prefix + text) + 1 <= limit


@dataclass(frozen=True)
class Layout:
    """How the kept clauses are written: with their speakers (`speakers`), as bullets."""

    speakers: bool = True
    bullets: bool = False


def _render(units: Sequence[Unit], layout: Layout = Layout()) -> str:
    """Return the label line plus the units, one line per run of the same speaker."""
    lines = [LABEL]
    previous: Unit | None = None
    bullet = "- " if layout.bullets else ""
    for unit in units:
        if previous is None or not unit.continues(previous):
            lines[-1] = lines[-1].rstrip(_TRAILING)
            text = _capital(unit.text)
            who = f"{unit.speaker}: " if unit.speaker and layout.speakers else ""
            lines.append(f"{bullet}{who}{text}")
        elif unit.adjacent(previous):
            lines[-1] += " " + unit.text
        elif previous.text.endswith((".", "!", "?")):
            lines[-1] += " " + _capital(unit.text)
        else:
            lines[-1] = lines[-1].rstrip(_TRAILING) + "; " + unit.text
        previous = unit
    lines[-1] = lines[-1].rstrip(_TRAILING) if len(lines) > 1 else lines[-1]
    return "\n".join(lines)


def _capital(text: str) -> str:
    """Return text with its first letter capitalised (it opens a sentence of the summary)."""
    return text[:1].upper() + text[1:]


def _truncated(unit: Unit, budget: int, layout: Layout) -> str:
    """Return the label and the leading words of unit that fit in budget tokens, ending in
    "…" when words were cut (the reader sees the clause is incomplete)."""
    words = unit.text.split()
    whole = len(words)
    while words:
        line = " ".join(words) + ("" if len(words) == whole else " …")
        who = f"{unit.speaker}: " if unit.speaker and layout.speakers else ""
        text = f"{LABEL}\n{'- ' if layout.bullets else ''}{who}{line}"
        if count_tokens(text) <= budget:
            return text
        words.pop()
    return LABEL


def extractive_summary(
    lines: Sequence[str],
    budget_tokens: int,
    *,
    previous_summary: str = "",
    skip: Callable[[str], bool] | None = None,
    layout: Layout = Layout(),
    tuning: Tuning | None = None,
) -> str:
    """Return a labelled extractive summary of lines that fits in budget_tokens.

    Args:
        lines: Entries oldest first, as "speaker: content" or plain content (one per line).
        budget_tokens: Maximum size of the result in cl100k tokens, label line included.
        previous_summary: An earlier summary; its clauses compete for the budget, favoured.
        skip: Leaves out every clause it is true of (what a prompt says to drop).
        layout: Speakers shown or not, bullets or not (what a prompt asks for).
        tuning: The pick's knobs (None: `summary_pick.TUNING`, the measured defaults).

    Returns:
        The label line, then the kept clauses in input order, one line per speaker turn run.
        Only the label when the input holds no text at all.

    Raises:
        ValueError: If budget_tokens cannot hold the label line and a few words.

    Small budgets: a clause too long to fit in the budget on its own is cut into phrases
    that fit (at its punctuation, before prepositions and conjunctions), so the summary
    keeps the most informative phrases (amounts, dates, names) rather than the leading
    words of one clause; when one phrase alone is worth more than the cheap fragments the
    greedy pick filled the budget with, the pick starts from it. The previous summary is
    favoured (information is carried forward), but a summary must take something from the
    new lines:
    when the previous summary's clauses would fill the whole budget and leave out every new
    line, the selection is redone with the previous summary limited to half the budget.
    This only happens when the budget cannot hold the previous summary plus any new fact, so
    a summary that is full turns over instead of freezing on its oldest content.
    """
    floor = count_tokens(LABEL) + 4
    if budget_tokens < floor:
        raise ValueError(f"budget_tokens={budget_tokens} is too small; use at least {floor}")
    knobs = tuning or summary_pick.TUNING
    room = budget_tokens - count_tokens(LABEL)
    numbers = knobs.number_words
    units = _units(lines, previous_summary, limit=room, skip=skip, number_words=numbers) or _units(
        lines, previous_summary, raw=True, limit=room, skip=skip, number_words=numbers
    )
    weights = word_weights(units, knobs)
    chosen = pick(units, weights, room, knobs)
    while chosen and count_tokens(summary := _render(chosen, layout)) > budget_tokens:
        chosen.remove(min(chosen, key=lambda u: unit_value(u, Counter(), weights, knobs)))
    if chosen:
        return _topped_up(units, weights, room, summary, budget_tokens, layout, knobs)
    if not units:
        return LABEL
    best = max(units, key=lambda u: unit_value(u, Counter(), weights, knobs))
    return _truncated(best, budget_tokens, layout)


def _topped_up(
    units: Sequence[Unit],
    weights: dict[str, float],
    room: int,
    summary: str,
    budget: int,
    layout: Layout,
    tuning: Tuning,
) -> str:
    """Return summary, or a fuller pick that still fits budget when summary left room.

    The pick counts each clause's own trailing comma and line break, which the rendered
    line drops or shares (about one token per line), so a summary renders a few percent
    under its budget; picking again with that slack added fills it.
    """
    for _ in range(tuning.top_up_rounds):
        slack = budget - count_tokens(summary)
        if slack < 2:
            break
        room += slack
        fuller = _render(pick(units, weights, room, tuning), layout)
        if count_tokens(fuller) > budget:
            break
        summary = fuller
    return summary


def _block(rows: list[str], name: str, *, last: bool) -> tuple[list[str], list[str]] | None:
    """Return (rows inside the <name> block, rows outside it), or None if there is none.

    The block opens at the first line `<name>` and closes at the first (or, with last, the
    last) line `</name>` after it.
    """
    if f"<{name}>" not in rows:
        return None
    start = rows.index(f"<{name}>")
    closes = [i for i, row in enumerate(rows) if i > start and row == f"</{name}>"]
    if not closes:
        return None
    end = closes[-1] if last else closes[0]
    return rows[start + 1 : end], rows[:start] + rows[end + 1 :]


def parse_compaction_prompt(text: str) -> tuple[str, list[str], int]:
    """Return (previous_summary, entry lines, budget tokens) read back from a compaction prompt.

    The blocks are the ones `memory.prompts` renders: `<previous_summary>` ... and
    `<entries>` ... `</entries>` on lines of their own, and a line `Token budget: N` outside
    them. Free text with no entries block is taken as the entries; with no budget line the
    budget is a quarter of the entries' tokens (at least 64).
    """
    rows = text.splitlines()
    previous, rest = _block(rows, "previous_summary", last=False) or ([], rows)
    entries, outside = _block(rest, "entries", last=True) or (rest, rest)
    lines = [row for row in entries if row.strip() and not _BUDGET_LINE.fullmatch(row)]
    budgets = _BUDGET_LINE.findall("\n".join(outside))
    budget = int(budgets[-1]) if budgets else max(64, count_tokens("\n".join(lines)) // 4)
    return "\n".join(previous).strip(), lines, budget


_INSTRUCTIONS_HEAD = "Instructions for this memory bank:"
_INSTRUCTIONS_END = "Merge the previous summary"


def prompt_instructions(text: str) -> str:
    """Return the bank's instructions read back from a compaction prompt (`memory.prompts`
    renders them after a line `Instructions for this memory bank:`); "" when there are none."""
    rows = text.splitlines()
    if _INSTRUCTIONS_HEAD not in rows:
        return ""
    start = rows.index(_INSTRUCTIONS_HEAD) + 1
    end = next(
        (i for i in range(start, len(rows)) if rows[i].startswith(_INSTRUCTIONS_END)), len(rows)
    )
    return "\n".join(rows[start:end]).strip()
