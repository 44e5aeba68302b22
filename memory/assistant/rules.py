"""The offline, rule-based assistant: volume and domain read from the description, numbers
derived from them with the arithmetic shown, prompts from the shipped templates. For an
existing bank its statistics (`BankFigures`) come first: the average entry's tokens, the
rate its keys grow at when no volume is stated, and what the numbers do to what it holds."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.assistant import observed
from memory.assistant.records import OFFLINE_ASSISTANT_LABEL, BankFigures, Proposal
from memory.assistant.units import days_text, number
from memory.config import Template, get_template
from memory.models import BankType


@dataclass(frozen=True)
class Domain:
    """A use case the rules recognise, and what its numbers are derived from."""

    name: str
    template: str | None
    keywords: tuple[str, ...]
    tokens_per_item: int
    """Typical tokens of one message or note in this domain."""
    verbatim_days: int
    """How many days of entries stay verbatim before compaction summarises the oldest."""


DOMAINS = (
    Domain("short-term session", "short-term-session",
           ("session", "short-term", "short term", "scratch", "temporary", "ephemeral"), 40, 1),
    Domain("meeting notes", "meeting-notes",
           ("meeting", "minutes", "standup", "stand-up", "retro", "1:1"), 120, 14),
    Domain("customer support", "customer-support",
           ("support", "customer", "helpdesk", "help desk", "ticket", "complaint"), 40, 4),
    Domain("user preferences", "user-preferences",
           ("preference", "likes", "dislikes", "settings", "profile"), 25, 30),
    Domain("entity extraction", "entity-extraction",
           ("entity", "entities", "extract", "knowledge graph", "facts about"), 60, 30),
    Domain("persona", "persona", ("persona", "character", "role-play", "roleplay"), 80, 365),
)  # fmt: skip
"""Checked in order: the first whose keyword the description holds wins."""
GENERIC = {
    "conversation": Domain("conversation history", None, (), 40, 7),
    "general": Domain("knowledge entries", None, (), 60, 30),
}
GENERIC_PROMPT = {
    "conversation": (
        "Summarize this conversation history. Keep who said what, decisions, names, numbers, "
        "dates and open questions. Drop greetings and small talk."
    ),
    "general": (
        "Consolidate these entries into a deduplicated list of facts. Keep names, numbers "
        "and dates verbatim; when entries conflict, keep the most recent."
    ),
}
GENERIC_RETENTION: dict[BankType, int | None] = {"conversation": 90, "general": None}

_UNIT = r"(?:messages?|msgs?|turns?|entries|entry|notes?|interactions?|exchanges?|emails?|tickets?|items?|facts?|chats?|conversations?|replies)"  # noqa: E501
_PERIOD = r"(?P<period>hour|day|week|month|year)"
_VOLUME = re.compile(
    rf"(?P<count>\d[\d,]*(?:\.\d+)?)\s*(?:new\s+)?(?P<unit>{_UNIT})\s*"
    rf"(?:(?:per|a|an|each|every|/)\s*{_PERIOD}|(?P<adverb>hourly|daily|weekly|monthly))",
    re.I,
)
_PER_WHO = re.compile(
    r"\bper\s+(?P<who>customer|user|conversation|thread|person|account|agent|team|project|meeting|session)\b",
    re.I,
)
_PER_DAY = {"hour": 24.0, "day": 1.0, "week": 1 / 7, "month": 1 / 30, "year": 1 / 365}
_ADVERB = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month"}
_KEEP_FOR = re.compile(
    r"(?:keep|retain|store|hold|delete|clean(?:ed)?\s+up|expire|purge)\w*\s+"
    r"(?:\w+\s+){0,4}?(?:for|after|within|older than)\s+"
    r"(?P<n>\d+)\s*(?P<unit>days?|weeks?|months?|years?)",
    re.I,
)
_CLEANUP = re.compile(r"clean(?:ed)?\s*up\s+(?P<adverb>daily|weekly|monthly|yearly)", re.I)
_FOREVER = re.compile(
    r"\b(?:forever|indefinitely|permanent(?:ly)?|never (?:delete|expire))\b", re.I
)
_ASKS = re.compile(
    r"\b(?:keep|preserve|discard|drop|ignore|remove|focus on|emphasi[sz]e)\b[^.;!?\n]*", re.I
)
_DAYS_IN = {"day": 1, "week": 7, "month": 30, "year": 365}
TOKENS_FLOOR = 500
"""Smallest max_tokens proposed: a summary budget under ~200 tokens (7/16 of it) holds little."""
TURNS_FLOOR = 10


@dataclass(frozen=True)
class Volume:
    """A stated volume: so many items per period (and per whom, if said)."""

    count: float
    unit: str
    period: str
    per: str | None

    @property
    def per_day(self) -> float:
        return self.count * _PER_DAY[self.period]


def read_volume(description: str) -> Volume | None:
    """Return the first stated volume ("about 50 messages per day per customer"), if any."""
    match = _VOLUME.search(description)
    if match is None:
        return None
    period = match["period"] or _ADVERB[match["adverb"].lower()]
    who = _PER_WHO.search(description)
    unit = match["unit"].lower()
    return Volume(
        count=float(match["count"].replace(",", "")),
        unit=unit if unit.endswith("s") else unit + "s",
        period=period.lower(),
        per=who["who"].lower() if who else None,
    )


def pick_domain(description: str, bank_type: BankType | None) -> Domain:
    """Return the first domain whose keyword the description holds (of the type, if given)."""
    text = description.casefold()
    for domain in DOMAINS:
        if bank_type is not None and _template(domain).type != bank_type:
            continue
        if any(re.search(rf"\b{re.escape(word)}", text) for word in domain.keywords):
            return domain
    return GENERIC[bank_type or _guess_type(text)]


def _template(domain: Domain) -> Template:
    assert domain.template is not None
    return get_template(domain.template)


def _guess_type(text: str) -> BankType:
    words = ("conversation", "chat", "message", "dialog", "thread", "support", "email")
    return "conversation" if any(word in text for word in words) else "general"


def nice(value: float, *, floor: int) -> int:
    """Return `value` rounded to a number a person would pick (two significant digits)."""
    if value <= floor:
        return floor
    magnitude = 10 ** max(len(str(int(value))) - 2, 0)
    return int(round(value / magnitude) * magnitude)


DEFAULT_MODE = "balanced"
"""The mode a bank gets with no template (as `memory.banks` creates it)."""


def propose_offline(
    description: str, bank_type: BankType | None, figures: BankFigures | None = None
) -> Proposal:
    """Return the rule-based proposal for `description` (labelled OFFLINE_ASSISTANT_LABEL).

    Args:
        description: The bank's use in plain words.
        bank_type: The bank's type when known.
        figures: An existing bank's statistics: its numbers then come from what it holds,
            and its mode is kept.
    """
    domain = pick_domain(description, bank_type)
    template = _template(domain) if domain.template else None
    kind: BankType = bank_type or (template.type if template else _guess_type(description))
    rationale: list[str] = []
    if template is not None and template.compaction_prompt:
        rationale.append(f"Use case: {domain.name} (the {template.name!r} template's prompt).")
        prompt = template.compaction_prompt
    elif template is not None:
        rationale.append(
            f"Use case: {domain.name} (the {template.name!r} template deletes the overflow "
            "unsummarised; this prompt keeps a summary of it instead)."
        )
        prompt = GENERIC_PROMPT[kind]
    else:
        rationale.append(f"Use case: {domain.name} (no template matched: a general prompt).")
        prompt = GENERIC_PROMPT[kind]
    asks = [
        clause
        for match in _ASKS.finditer(description)
        for clause in (c.strip() for c in re.split(r",|;|\band\b", match.group(0)))
        if clause and clause.casefold() not in prompt.casefold() and not _about_retention(clause)
    ]
    if asks:
        prompt += " Also: " + ", ".join(asks) + "."
        rationale.append("Your own instructions are added to the prompt: " + ", ".join(asks) + ".")
    seen = observed.usable(figures)
    max_tokens, max_turns = _thresholds(description, domain, template, rationale, seen)
    retention = _retention(description, kind, template, rationale)
    if seen is not None:
        rationale.append(observed.size_line(seen, max_tokens))
        ages = observed.age_line(seen, retention)
        if ages is not None:
            rationale.append(ages)
    elif figures is not None:
        rationale.append(
            f"Bank {figures.bank!r} holds {number(figures.entries)} entries: too few for its "
            "statistics to inform the numbers."
        )
    mode = _mode(figures, template, rationale)
    return Proposal(
        bank_type=kind,
        compaction_prompt=prompt,
        max_tokens=max_tokens,
        max_turns=max_turns,
        retention_days=retention,
        rationale=rationale,
        assistant=OFFLINE_ASSISTANT_LABEL,
        offline=True,
        mode=mode,
    )


def _mode(figures: BankFigures | None, template: Template | None, rationale: list[str]) -> str:
    if figures is not None:
        rationale.append(
            f"Mode {figures.mode}: bank {figures.bank!r} keeps its own (a mode never changes)."
        )
        return figures.mode
    if template is not None:
        rationale.append(
            f"Mode {template.mode}: the {template.name!r} template's (fixed at creation)."
        )
        return template.mode
    return DEFAULT_MODE


def _about_retention(text: str) -> bool:
    return any(p.search(text) for p in (_KEEP_FOR, _CLEANUP, _FOREVER))


def _thresholds(
    description: str,
    domain: Domain,
    template: Template | None,
    rationale: list[str],
    seen: BankFigures | None,
) -> tuple[int | None, int | None]:
    volume = read_volume(description)
    if volume is None and seen is not None:
        rationale.append(observed.rate_line(seen))
        volume = Volume(count=observed.key_rate(seen), unit="entries", period="day", per="key")
    if volume is None:
        tokens = template.max_tokens if template else None
        turns = template.max_turns if template else None
        if template is None:
            tokens = nice(domain.tokens_per_item * 50, floor=TOKENS_FLOOR)
            turns = 50
        rationale.append(
            f"No volume stated, so max_tokens {number(tokens)} and max_turns {number(turns)} "
            "are the defaults; say e.g. 'about 50 messages per day' to have them derived from it."
        )
        return tokens, turns
    per_day = volume.per_day
    per = f" per {volume.per}" if volume.per else ""
    days = domain.verbatim_days
    item = domain.tokens_per_item
    item_text = f"~{item} tokens"
    if seen is not None and seen.tokens_per_entry is not None:
        item = max(1, round(seen.tokens_per_entry))
        item_text = f"~{item} tokens (the bank's average entry)"
    daily_tokens = per_day * item
    tokens = nice(daily_tokens * days, floor=TOKENS_FLOOR)
    turns = nice(per_day * days, floor=TURNS_FLOOR)
    stated = f"{number(volume.count)} {volume.unit}/{volume.period}"
    if volume.period != "day":
        stated += f" = {number(per_day)} {volume.unit}/day"
    kept_days = tokens / daily_tokens if daily_tokens else float(days)
    floor = " (the smallest proposed)" if tokens == TOKENS_FLOOR else ""
    rationale.append(
        f"{stated}{per} x {item_text} = {number(daily_tokens)} tokens/day; "
        f"max_tokens {number(tokens)}{floor} keeps ~{days_text(kept_days)} verbatim."
    )
    turns_floor = " (the smallest proposed)" if turns == TURNS_FLOOR else ""
    rationale.append(
        f"max_turns {number(turns)}{turns_floor} ~ {number(per_day)} {volume.unit}/day x "
        f"{days_text(turns / per_day if per_day else days)}: both thresholds trigger together."
    )
    if volume.per and volume.per != "key":
        rationale.append(f"Key the bank by {volume.per}: each {volume.per} compacts on its own.")
    return tokens, turns


def _retention(
    description: str, kind: BankType, template: Template | None, rationale: list[str]
) -> int | None:
    stated = _KEEP_FOR.search(description)
    if stated is not None:
        unit = stated["unit"].lower().rstrip("s")
        days = int(stated["n"]) * _DAYS_IN[unit]
        rationale.append(f"Retention {days} days: you asked for {stated['n']} {stated['unit']}.")
        return days
    cleanup = _CLEANUP.search(description)
    if cleanup is not None:
        days = _DAYS_IN[_ADVERB.get(cleanup["adverb"].lower(), "year")]
        rationale.append(f"Retention {days} days: cleaned up {cleanup['adverb'].lower()}.")
        return days
    if _FOREVER.search(description):
        rationale.append("Retention indefinite: you asked to keep entries.")
        return None
    retention = template.retention_days if template else GENERIC_RETENTION[kind]
    source = f"the {template.name!r} template's" if template else f"the {kind} bank"
    shown = f"{retention} days" if retention else "indefinite"
    rationale.append(f"Retention {shown}: {source} default.")
    return retention
