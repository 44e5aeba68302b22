"""Synthetic entries with planted facts: a seeded template generator offline, an LLM when one
is configured (`synthetic_llm`). Same description, count and seed: the same entries.

Template sets of UPDATE_MIN_COUNT entries or more also plant an update: the earliest fact's
value changes later, so a summary is checked for keeping the latest (`PlantedFact.previous`)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

from memory.errors import InvalidInput
from memory.prompt_lab.records import DraftEntry, FactKind, PlantedFact, SyntheticSource
from memory.validation import check_text

TEMPLATE_GENERATOR_LABEL = "template generator (offline)"
SYNTHETIC_KEY = "synthetic"
MIN_COUNT = 2
MAX_COUNT = 500
MAX_FACTS = 16
FACT_SHARE = 5
"""One entry in this many carries a planted fact (at least one fact of each kind)."""
UPDATE_MIN_COUNT = 8
"""Sets of at least this many entries get a planted update: the earliest fact's value changes
in a later entry (`Update: the order number is now ...`); is the latest kept?"""

_SUBJECTS: dict[FactKind, tuple[tuple[str, str], ...]] = {
    "number": (
        ("order number", "My order number is {value}."),
        ("ticket number", "The ticket number for this is {value}."),
        ("invoice number", "The invoice number is {value}."),
        ("account number", "My account number is {value}."),
    ),
    "date": (
        ("delivery date", "The delivery date is {value}."),
        ("appointment date", "The appointment date is {value}."),
        ("renewal date", "My renewal date is {value}."),
        ("deadline", "The deadline is {value}."),
    ),
    "name": (
        ("account manager", "My account manager is {value}."),
        ("technician", "The technician is {value}."),
        ("team lead", "Our team lead is {value}."),
        ("contact person", "The contact person is {value}."),
    ),
    "preference": (
        ("preferred contact channel", "My preferred contact channel is {value}."),
        ("preferred delivery time", "My preferred delivery time is {value}."),
        ("preferred language", "My preferred language is {value}."),
        ("preferred payment method", "My preferred payment method is {value}."),
    ),
}
PREFERENCES = {
    "preferred contact channel": ("email", "phone", "text message", "live chat"),
    "preferred delivery time": ("mornings", "afternoons", "evenings", "weekends"),
    "preferred language": ("Portuguese", "German", "Japanese", "Spanish"),
    "preferred payment method": ("credit card", "bank transfer", "invoice", "gift card"),
}
"""The values a template preference fact is drawn from."""
_NAMES = (
    "Priya Raman", "Tomas Berg", "Amara Okafor", "Lena Fischer", "Diego Alvarez",
    "Mei Tanaka", "Omar Haddad", "Sofia Rossi", "Jonas Lind", "Grace Mensah",
)  # fmt: skip
_SPEAKERS = ("Dana", "Ravi", "Noor", "Elliot", "Kai", "Marta")
_AGENT = "Support"
_USER_FILLER = (
    "Hi, I have a question about {topic}.",
    "Thanks, that helps.",
    "Could you check that again for me?",
    "I tried that already yesterday.",
    "Okay, I will wait for your reply.",
    "Is there anything else you need from me?",
)
_AGENT_FILLER = (
    "Thanks for reaching out about {topic}.",
    "Let me look into that for you.",
    "One moment while I check our records.",
    "I understand, sorry for the trouble.",
    "I have noted that on your file.",
    "Is there anything else I can help with?",
)
_NOTE_FILLER = (
    "General note about {topic}.",
    "Follow-up pending on {topic}.",
    "Reviewed the open items.",
    "No change since the last update.",
)


@dataclass(frozen=True)
class SyntheticSet:
    """Generated entries, the facts planted in them, and what generated them (a label)."""

    entries: list[DraftEntry]
    facts: list[PlantedFact]
    generator: str


def check_source(source: SyntheticSource) -> None:
    """Check a synthetic source's description and count.

    Raises:
        InvalidInput: a blank description or a count out of range.
    """
    check_text("synthetic description", source.description)
    if not source.description.strip():
        raise InvalidInput("the synthetic description is empty: describe the entries to make")
    if not MIN_COUNT <= source.count <= MAX_COUNT:
        raise InvalidInput(
            f"synthetic count must be {MIN_COUNT}-{MAX_COUNT} entries, got {source.count}"
        )


def template_set(source: SyntheticSource) -> SyntheticSet:
    """Return `source.count` entries made from templates, with facts of every kind planted."""
    check_source(source)
    rng = random.Random(f"{source.seed}:{source.description}:{source.bank_type}")
    topic = " ".join(source.description.split())[:80]
    conversation = source.bank_type == "conversation"
    slots = list(range(0, source.count, 2)) if conversation else list(range(source.count))
    wanted = min(MAX_FACTS, len(slots), max(4, source.count // FACT_SHARE))
    facts = _facts(rng, wanted)
    where = dict(zip(sorted(rng.sample(slots, len(facts))), facts, strict=True))
    update = _update(source, where, slots)
    if update is not None:  # the earliest fact changes later: its latest value is the truth
        first = min(where)
        where[first] = (update[1], where[first][1])
    customer = rng.choice(_SPEAKERS)
    entries: list[DraftEntry] = []
    for index in range(source.count):
        fact_line = where.get(index)
        if update is not None and index == update[0]:
            fact_line = (update[1], update[2])
        if conversation:
            user = index % 2 == 0
            pool = _USER_FILLER if user else _AGENT_FILLER
            filler = rng.choice(pool).format(topic=topic)  # drawn always: the same fillers
            text = fact_line[1] if fact_line else filler
            entries.append(
                DraftEntry(
                    key=SYNTHETIC_KEY,
                    content=text,
                    speaker=customer if user else _AGENT,
                    role="user" if user else "assistant",
                )
            )
        else:
            filler = rng.choice(_NOTE_FILLER).format(topic=topic)
            text = fact_line[1] if fact_line else filler
            entries.append(DraftEntry(key=SYNTHETIC_KEY, content=text))
    return SyntheticSet(
        entries=entries,
        facts=[pair[0] for _, pair in sorted(where.items())],
        generator=TEMPLATE_GENERATOR_LABEL,
    )


def _update(
    source: SyntheticSource, where: dict[int, tuple[PlantedFact, str]], slots: list[int]
) -> tuple[int, PlantedFact, str] | None:
    """Return a planted update of the earliest fact (its slot, the fact with its latest value
    and `previous`, the entry's line), placed in a free slot about 70% into the entries and
    before the newest (kept verbatim by a test); None when no slot is free (short sets).

    Drawn from its own seeded generator, so the other entries and facts stay as they were."""
    first = min(where)
    free = [i for i in slots if i > first and i not in where and i < source.count - 1]
    if source.count < UPDATE_MIN_COUNT or not free:
        return None
    slot = min(free, key=lambda i: abs(i - int(source.count * 0.7)))
    rng = random.Random(f"update:{source.seed}:{source.description}:{source.bank_type}")
    fact = where[first][0]
    taken = {f.value for f, _ in where.values()}
    if fact.kind == "number":
        value = str(next(n for n in iter(lambda: rng.randrange(10_000, 99_999), None)
                         if str(n) not in taken))  # fmt: skip
    elif fact.kind == "date":
        value = _spoken(date(2026, 1, 1) + timedelta(days=rng.randrange(365)))
        value = value if value != fact.value else _spoken(date(2027, 1, 1))
    elif fact.kind == "name":
        value = rng.choice([n for n in _NAMES if n not in taken])
    else:
        value = rng.choice([p for p in PREFERENCES[fact.text] if p != fact.value])
    updated = fact.model_copy(update={"value": value, "previous": fact.value})
    return slot, updated, f"Update: the {fact.text} is now {value}."


def _facts(rng: random.Random, wanted: int) -> list[tuple[PlantedFact, str]]:
    """Return `wanted` facts (kinds in turn, distinct subjects and values) and their lines."""
    kinds: tuple[FactKind, ...] = ("number", "date", "name", "preference")
    subjects = {kind: rng.sample(_SUBJECTS[kind], len(_SUBJECTS[kind])) for kind in kinds}
    names = rng.sample(_NAMES, len(_NAMES))
    numbers = rng.sample(range(10_000, 99_999), MAX_FACTS)
    first_day = date(2026, 1, 1)
    days = rng.sample(range(0, 365), MAX_FACTS)
    out: list[tuple[PlantedFact, str]] = []
    for index in range(wanted):
        kind = kinds[index % len(kinds)]
        subject, line = subjects[kind][index // len(kinds)]
        if kind == "number":
            value = str(numbers[index])
        elif kind == "date":
            value = _spoken(first_day + timedelta(days=days[index]))
        elif kind == "name":
            value = names[index // len(kinds)]
        else:
            value = rng.choice(PREFERENCES[subject])
        fact = PlantedFact(kind=kind, text=subject, value=value)
        out.append((fact, line.format(value=value)))
    return out


def _spoken(day: date) -> str:
    """Return a date as entries say it, e.g. `March 14, 2026`."""
    return f"{day:%B} {day.day}, {day.year}"
