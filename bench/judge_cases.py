"""Calibration cases of the heuristic judge (bench/judge.py and tests/judge/test_calibration.py).

Each case is a source and summaries whose order is known: `faithful` (every fact, several
facts merged into one sentence from different turns), `half` (the same with half its facts
left out) and `invented` (the faithful one plus claims the source never makes: one with a
name and an amount, one with neither). Targets (issue 23): faithful scores near 1, beats half
and invented by at least 0.15 overall, and raises no "misplaced" flag. `REPETITIVE` is a log
of near-identical lines whose verbatim summary must stay faithful.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.prompt_lab.records import SyntheticSource
from memory.prompt_lab.synthetic import template_set

SUPPORT_PROMPT = (
    "Summarize this support conversation history. Keep the customer's issues, what was "
    "tried, resolutions, commitments made (with dates and numbers) and open questions. Drop "
    "greetings and small talk."
)


@dataclass(frozen=True)
class Case:
    """A source and its three summaries in the known order."""

    name: str
    source: list[str]
    faithful: str
    half: str
    invented: str
    prompt: str = SUPPORT_PROMPT


_DELIVERY = [
    "Dana: Hi there, I hope you are well.",
    "Support: Hello Dana, thanks for contacting us. How can I help?",
    "Dana: My espresso machine, order 48213, arrived on March 3 with a cracked water tank.",
    "Support: Sorry to hear that. Could you send a photo of the tank?",
    "Dana: Sure, I sent two photos to support@example.com this morning.",
    "Support: Thank you, I can see them. We tried a remote diagnosis and the pump also fails.",
    "Dana: I paid 389 euros for it, so I would like a full refund.",
    "Support: I can offer a replacement unit or a refund of 389 euros.",
    "Dana: The refund, please, to my Visa card.",
    "Support: Done. The refund of 389 euros will reach your Visa card within 5 business days.",
    "Dana: Will someone collect the broken machine?",
    "Support: Yes, the courier Tomas Berg will collect it on March 9 between 9 and 12.",
    "Dana: That works. My flat is on the 4th floor, there is no lift.",
    "Support: Noted, I added the 4th floor to the pickup note. Your case number is 7731.",
    "Dana: Great, thanks a lot!",
    "Support: You are welcome, have a nice day.",
]
DELIVERY = Case(
    name="support-refund",
    source=_DELIVERY,
    faithful=(
        "Dana's espresso machine (order 48213) arrived on March 3 with a cracked water tank, "
        "and a remote diagnosis found that the pump also fails. "
        "Dana sent two photos to support@example.com and asked for a full refund of the 389 "
        "euros she paid. "
        "Support refunded 389 euros to her Visa card within 5 business days. "
        "The courier Tomas Berg will collect the machine on March 9 between 9 and 12 from the "
        "4th floor, with no lift. "
        "The case number is 7731."
    ),
    half=(
        "Dana's espresso machine (order 48213) arrived on March 3 with a cracked water tank. "
        "Support refunded 389 euros to her Visa card."
    ),
    invented=(
        "Dana's espresso machine (order 48213) arrived on March 3 with a cracked water tank, "
        "and a remote diagnosis found that the pump also fails. "
        "Dana sent two photos to support@example.com and asked for a full refund of the 389 "
        "euros she paid. "
        "Support refunded 389 euros to her Visa card within 5 business days. "
        "The courier Tomas Berg will collect the machine on March 9 between 9 and 12 from the "
        "4th floor, with no lift. "
        "The case number is 7731. "
        "Support also gave Dana a voucher of 50 euros approved by the manager Helga Brandt. "
        "Dana said she will never buy from this shop again and will close her account."
    ),
)

_TEAM = [
    "Ana: Morning all. Quick sync on the Lisbon launch.",
    "Ben: The venue contract is signed, we pay 12000 euros in two parts.",
    "Ana: Good. When is the first payment due?",
    "Ben: The first half is due on May 2, the rest after the event.",
    "Chloe: I booked 40 hotel rooms at the Tivoli for June 11 to June 13.",
    "Ana: Did marketing pick the keynote speaker?",
    "Chloe: Yes, Rui Costa agreed to give the keynote on June 12.",
    "Ben: We still need a caterer; the quote from Sabores was too high at 95 euros a head.",
    "Ana: Let us ask two more caterers and decide by May 15.",
    "Chloe: I will send the invitations to the 300 guests next Monday.",
    "Ana: Perfect, thanks everyone.",
]
TEAM = Case(
    name="team-notes",
    source=_TEAM,
    faithful=(
        "For the Lisbon launch Ben signed the venue contract for 12000 euros, with the first "
        "half due on May 2 and the rest after the event. "
        "Chloe booked 40 hotel rooms at the Tivoli for June 11 to June 13, and Rui Costa will "
        "give the keynote on June 12. "
        "The caterer Sabores was too expensive at 95 euros a head, so Ana asked for two more "
        "quotes and a decision by May 15. "
        "Chloe will send the invitations to the 300 guests next Monday."
    ),
    half=(
        "For the Lisbon launch Ben signed the venue contract for 12000 euros. "
        "Chloe booked 40 hotel rooms at the Tivoli."
    ),
    invented=(
        "For the Lisbon launch Ben signed the venue contract for 12000 euros, with the first "
        "half due on May 2 and the rest after the event. "
        "Chloe booked 40 hotel rooms at the Tivoli for June 11 to June 13, and Rui Costa will "
        "give the keynote on June 12. "
        "The caterer Sabores was too expensive at 95 euros a head, so Ana asked for two more "
        "quotes and a decision by May 15. "
        "Chloe will send the invitations to the 300 guests next Monday. "
        "Ben hired the band Os Lobos for 4000 euros and the director Marco Pires approved it. "
        "The team agreed to move the whole launch online because of the weather."
    ),
)


def synthetic_case(seed: int) -> Case:
    """Return a case over a seeded synthetic support set: its planted facts, two per
    sentence (merged from different turns), are the faithful summary."""
    made = template_set(
        SyntheticSource(description="late deliveries and refunds", count=40, seed=seed)
    )
    source = [f"{e.speaker}: {e.content}" for e in made.entries]
    who = made.entries[0].speaker or "The customer"
    said = [
        f"the {fact.text} changed from {fact.previous} to {fact.value}"
        if fact.previous
        else f"the {fact.text} is {fact.value}"
        for fact in sorted(made.facts, key=lambda f: f.previous is not None)
    ]  # a planted update (last: the half summary drops it): a faithful summary tells it
    pairs = [said[i : i + 2] for i in range(0, len(said), 2)]
    sentences = [f"For {who}, {' and '.join(pair)}." for pair in pairs]
    invented = [
        f"{who} was promised a voucher of 75 dollars by the manager Helga Brandt.",
        f"{who} asked to close the account and move to another shop.",
    ]
    return Case(
        name=f"synthetic-{seed}",
        source=source,
        faithful=" ".join(sentences),
        half=" ".join(sentences[: len(sentences) // 2]),
        invented=" ".join(sentences + invented),
    )


REPETITIVE = [
    f"monitor: Backup of server db{n} finished at 02:{10 + n} with 0 errors." for n in range(12)
]
"""A log of near-identical lines: its verbatim summary (a few lines) must stay faithful."""


def cases() -> list[Case]:
    """Return every calibration case."""
    return [DELIVERY, TEAM, synthetic_case(0), synthetic_case(1)]


MERGED = [
    (
        _DELIVERY,
        "Dana's order 48213 from March 3 was refunded 389 euros to her Visa card; Tomas Berg "
        "collects it on March 9 from the 4th floor, case 7731.",
    ),
    (
        _TEAM,
        "Ben, Chloe and Ana: venue 12000 euros (half due May 2), 40 rooms at the Tivoli June 11 "
        "to June 13, Rui Costa keynote June 12, caterer decision by May 15, 300 invitations "
        "Monday.",
    ),
]
"""Dense summaries that merge facts of many turns into one sentence: no fact is misplaced."""
