"""Synthetic entries with planted facts, and the exact compaction diff over them."""

from __future__ import annotations

import pytest

from memory.errors import InvalidInput
from memory.prompt_lab import TEMPLATE_GENERATOR_LABEL, PlantedFact, SyntheticSource, fact_diff
from memory.prompt_lab.synthetic import PREFERENCES, template_set

ORDER = PlantedFact(kind="number", text="order number", value="48213")
DELIVERY = PlantedFact(kind="date", text="delivery date", value="March 14, 2026")
MANAGER = PlantedFact(kind="name", text="account manager", value="Priya Raman")
CHANNEL = PlantedFact(kind="preference", text="preferred contact channel", value="email")
FACTS = [ORDER, DELIVERY, MANAGER, CHANNEL]


def test_a_summary_keeping_every_fact_in_other_words_keeps_them_all() -> None:
    summary = (
        "Dana (order 48,213) gets her delivery on 14 March 2026. Her account manager, "
        "priya raman, will reach her by Email."
    )

    assert fact_diff(FACTS, summary).model_dump() == {
        "kept": [f.model_dump() for f in FACTS],
        "dropped": [],
        "contradicted": [],
        "said": [],
    }


def test_the_diff_says_exactly_which_facts_were_kept_dropped_or_contradicted() -> None:
    summary = (
        "The order number is 48213. The delivery date is now 2026-03-21. "
        "Dana called about her machine."
    )

    diff = fact_diff(FACTS, summary)

    assert diff.kept == [ORDER]
    assert diff.contradicted == [DELIVERY]
    assert diff.dropped == [MANAGER, CHANNEL]


def test_other_values_of_each_kind_contradict_their_fact() -> None:
    summary = (
        "Her order number is 48299. Delivery date: March 15, 2026. "
        "The account manager is Tomas Berg. Preferred contact channel is phone."
    )

    diff = fact_diff(FACTS, summary)

    assert diff.contradicted == FACTS
    assert diff.kept == diff.dropped == []
    assert diff.said == [  # what the summary said of each, to show and highlight
        "Her order number is 48299.",
        "Delivery date: March 15, 2026.",
        "The account manager is Tomas Berg.",
        "Preferred contact channel is phone.",
    ]
    assert diff.said_of(MANAGER) == "The account manager is Tomas Berg."
    assert fact_diff([ORDER], "The order number is 48213.").said_of(ORDER) is None


def test_a_planted_update_is_kept_only_with_its_latest_value() -> None:
    source = SyntheticSource(description="support", count=20, seed=4)
    made = template_set(source)
    [updated] = [f for f in made.facts if f.previous is not None]
    old_line = next(e.content for e in made.entries if updated.previous in e.content)
    new_line = next(e.content for e in made.entries if updated.value in e.content)
    assert made.entries.index(next(e for e in made.entries if e.content == old_line)) < (
        made.entries.index(next(e for e in made.entries if e.content == new_line))
    )
    assert new_line == f"Update: the {updated.text} is now {updated.value}."

    stale = fact_diff([updated], f"Dana said: {old_line}")
    latest = fact_diff([updated], f"Dana said: {new_line}")

    assert stale.contradicted == [updated] and stale.said == [f"Dana said: {old_line}"]
    assert latest.kept == [updated]
    assert template_set(source) == made  # seeded: the same update every time
    short = template_set(source.model_copy(update={"count": 6}))
    assert all(f.previous is None for f in short.facts)  # too short for an update


def test_a_subject_named_without_any_value_is_dropped_not_contradicted() -> None:
    summary = "We talked about the order number, the delivery date and the account manager."

    assert fact_diff(FACTS, summary).dropped == FACTS


def test_a_number_inside_a_longer_number_is_not_kept() -> None:
    assert fact_diff([ORDER], "Ticket 148213 and 482130 are closed.").dropped == [ORDER]


def test_template_sets_are_reproducible_per_seed() -> None:
    source = SyntheticSource(description="support for espresso machines", count=30, seed=7)

    first, again = template_set(source), template_set(source)
    other = template_set(source.model_copy(update={"seed": 8}))

    assert first == again
    assert first.entries != other.entries
    assert first.generator == TEMPLATE_GENERATOR_LABEL


@pytest.mark.parametrize("bank_type", ["conversation", "general"])
def test_every_planted_fact_sits_verbatim_in_exactly_one_entry(bank_type: str) -> None:
    source = SyntheticSource(description="meeting notes", bank_type=bank_type, count=40, seed=3)  # type: ignore[arg-type]

    made = template_set(source)

    assert len(made.entries) == 40
    assert {f.kind for f in made.facts} == {"name", "number", "date", "preference"}
    assert len(made.facts) == 8  # one in five entries
    assert len({f.text for f in made.facts}) == len(made.facts)
    for fact in made.facts:
        holders = [e for e in made.entries if fact.value in e.content]
        assert len(holders) == 1, fact
        assert fact.text in holders[0].content
    whole = "\n".join(e.content for e in made.entries)
    assert fact_diff(made.facts, whole).kept == made.facts
    for fact in made.facts:
        if fact.kind == "preference":
            assert fact.value in PREFERENCES[fact.text]
    if bank_type == "conversation":
        assert {e.role for e in made.entries} == {"user", "assistant"}
        assert all(e.speaker for e in made.entries)
    else:
        assert all(e.speaker is None and e.role is None for e in made.entries)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"description": "  "}, "description is empty"),
        ({"count": 1}, "count must be 2-500"),
        ({"count": 501}, "count must be 2-500"),
    ],
)
def test_bad_synthetic_sources_are_refused(fields: dict[str, object], message: str) -> None:
    source = SyntheticSource.model_validate({"description": "support", **fields})

    with pytest.raises(InvalidInput, match=message):
        template_set(source)
