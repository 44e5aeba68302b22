"""The offline extractive summary keeps whole facts: subjects, numbers with what they count,
no fact cut to its lead-in while budget remains, near-duplicates merged, real sentences."""

from __future__ import annotations

import re

from flows.demo_sweeps import TURNS
from memory.providers.sentences import fragment_share, has_verb, is_fragment, sentences
from memory.providers.summarize import LABEL, extractive_summary
from memory.providers.tokens import count_tokens

DECISIONS = [
    f"p0: Decision {i}: ship F{i} by week {40 + i}; owner Alice{i}; budget {i}000 EUR."
    for i in range(1, 7)
]


def _body(summary: str) -> str:
    return summary.removeprefix(LABEL).strip()


def test_a_decision_is_kept_whole_or_not_at_all() -> None:
    summary = extractive_summary(DECISIONS, 120)
    assert count_tokens(summary) <= 120
    kept = [i for i in range(1, 7) if f"Decision {i}:" in summary]
    assert len(kept) >= 3
    for i in range(1, 7):
        whole = f"Decision {i}: ship F{i} by week {40 + i}; owner Alice{i}; budget {i}000 EUR."
        assert (whole in summary) == (i in kept), i
        # a number never leaves what it counts: no budget or week without its decision
        assert (f"budget {i}000" in summary) == (i in kept)
        assert (f"week {40 + i}" in summary) == (i in kept)
    assert "p0: budget 3000 EUR." not in summary


def test_the_demo_summary_keeps_subjects() -> None:
    lines = [f"{speaker}: {text}" for speaker, _, text in TURNS]
    total = count_tokens("\n".join(lines))
    for budget in (total // 4, total // 3, total // 2):
        summary = extractive_summary(lines, budget)
        assert "Dana: delivered to my office in Rotterdam." not in summary
        for sentence in sentences(summary):
            assert not sentence.lower().startswith(("delivered", "and ", "but ")), sentence
        assert fragment_share(summary) < 0.05, summary
        # every kept clause is one the speaker said, whole (greetings trimmed)
        said = " ".join(text for _, _, text in TURNS).lower()
        for sentence in sentences(summary):
            for clause in sentence.split("; "):
                assert clause.rstrip(".!?;").lower() in said, clause
            assert sentence[0].isupper() or sentence[0].isdigit(), sentence


def test_a_fact_is_not_cut_to_its_lead_in_while_budget_remains() -> None:
    long_fact = (
        "Invoice 7: we paid 300 dollars to Acme Logistics on 2024-03-02 for the pallet "
        "transport from Rotterdam to Oslo, approved by Maria."
    )
    lines = [f"Ann: {long_fact}", "Bob: I like tea.", "Ann: The van is blue."]
    summary = extractive_summary(lines, count_tokens(f"{LABEL}\nAnn: {long_fact}") + 2)
    assert long_fact in summary
    assert "…" not in summary


def test_near_duplicates_are_merged() -> None:
    lines = [
        "Bob: The launch moved to Friday 14 June at 3 pm.",
        "Ann: Great, thanks.",
        "Bob: The launch moved to Friday 14 June at 3 pm!",
        "Bob: So the launch moved to Friday 14 June at 3 pm.",
        "Ann: The venue is the Oslo office.",
    ]
    summary = extractive_summary(lines, 200)
    assert len(re.findall("launch moved", summary)) == 1
    assert "Oslo office" in summary


def test_fragments_are_told_from_sentences() -> None:
    assert is_fragment("delivered to my office in Rotterdam") is False  # a verb, no subject:
    assert is_fragment("and then we left") and is_fragment("because it rained")
    assert is_fragment("Star Wars!") and is_fragment("5 years already!")
    assert not is_fragment("The tank ships within 5 working days by DHL.")
    assert not is_fragment("I'm researching adoption agencies.")
    assert has_verb("She painted a sunset") and not has_verb("a sunset over the lake")
    assert sentences(f"{LABEL}\nAnn: One fact. Two facts!\nBob: Three?") == [
        "One fact.",
        "Two facts!",
        "Three?",
    ]
