"""The offline extractive summarizer and the prompt files it reads back."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memory import prompts
from memory.errors import InvalidInput
from memory.providers.summarize import (
    LABEL,
    extractive_summary,
    parse_compaction_prompt,
    split_speaker,
)
from memory.providers.tokens import count_tokens

CHAT = [
    "Alice: Hey Bob! How have you been?",
    "Bob: Hi Alice! Good to see you. I've been so busy lately, you know how it is.",
    "Alice: Totally! Same here.",
    "Bob: I adopted a beagle named Pepper on 14 March 2023; she is 2 years old.",
    "Alice: Aww, that's so sweet! I love dogs.",
    "Alice: By the way, I'm flying to Reykjavik on 9 July for the Arctic Data Summit.",
    "Bob: Wow, sounds amazing! Have fun!",
    "Bob: My sister Jenna finished the Boston Marathon in 3 hours 41 minutes.",
    "Alice: That's awesome, Bob! Tell her congrats!",
    "Bob: Thanks, will do. Talk to you soon!",
]
FACTS = ["14 March 2023", "Pepper", "Reykjavik", "9 July", "Jenna", "3 hours 41 minutes"]


def filler(count: int) -> list[str]:
    """Return chit-chat lines with few facts, to make a budget bite."""
    return [
        f"{'Alice' if i % 2 else 'Bob'}: Oh wow, that's really great, I totally agree with you!"
        for i in range(count)
    ]


def test_output_is_labelled_and_keeps_speakers() -> None:
    summary = extractive_summary(CHAT, 80)
    first, *rest = summary.splitlines()
    assert first == LABEL
    assert rest and all(line.startswith(("Alice: ", "Bob: ")) for line in rest)
    (pepper,) = [line for line in rest if "Pepper" in line]
    assert pepper.startswith("Bob: ")
    assert "I adopted a beagle named Pepper on 14 March 2023" in pepper


def test_keeps_numbers_dates_and_names_verbatim_and_drops_small_talk() -> None:
    summary = extractive_summary(CHAT, 80)
    for fact in FACTS:
        assert fact in summary
    for chatter in ("How have you been", "Talk to you soon", "Have fun", "Same here"):
        assert chatter not in summary


def test_drops_greetings_of_speakers_but_keeps_other_names() -> None:
    lines = [
        "Alice: Hey Bob! Where did you go in May?",
        "Bob: Oh, Lisbon, Alice! Then I visited my friend, Sarah!",
        "Alice: Thanks, Bob, that's lovely.",
    ]
    summary = extractive_summary(lines, 200)
    assert "Bob: Lisbon! Then I visited my friend, Sarah!" in summary
    assert "Hey Bob" not in summary and "Thanks" not in summary


def test_respects_the_budget() -> None:
    lines = (
        CHAT * 3 + filler(40) + [f"Bob: Order {n} shipped to Oslo on day {n}." for n in range(60)]
    )
    for budget in (10, 15, 25, 60, 150, 400):
        summary = extractive_summary(lines, budget)
        assert count_tokens(summary) <= budget
        assert count_tokens(summary) >= 0.75 * budget  # the budget is used, not wasted
        assert len(summary) > len(LABEL)


def test_facts_win_over_filler_under_a_tight_budget() -> None:
    lines = [*filler(10), "Bob: The wifi password is Tangerine-42.", *filler(10)]
    summary = extractive_summary(lines, 20)
    assert "Bob: The wifi password is Tangerine-42." in summary


def test_removes_duplicates_and_near_duplicates() -> None:
    fact = "I adopted a beagle named Pepper on 14 March 2023"
    lines = [
        f"Bob: {fact}.",
        f"Bob: {fact}.",
        f"Bob: Oh, {fact}!",
        f"Bob: So, {fact} actually.",
        f"Bob: Yesterday {fact}!",
        "Alice: I moved to Quebec in 2019.",
    ]
    summary = extractive_summary(lines, 500)
    assert summary.count("Pepper") == 1
    assert "Alice: I moved to Quebec in 2019." in summary


def test_same_words_in_another_order_are_another_fact() -> None:
    lines = [
        "Ann: Invoice 7 costs 9 dollars.",
        "Ann: Invoice 9 costs 7 dollars.",
        "Ann: Fact 1 of key 0: code 1.",
        "Ann: Fact 0 of key 0: code 0.",
    ]
    summary = extractive_summary(lines, 200)
    for line in lines:
        assert line.removeprefix("Ann: ").rstrip(".") in summary


def test_same_words_from_another_speaker_are_not_duplicates() -> None:
    lines = ["Alice: I live in Porto.", "Bob: I live in Porto."]
    summary = extractive_summary(lines, 100)
    assert "Alice: I live in Porto." in summary and "Bob: I live in Porto." in summary


def test_carries_the_previous_summary_forward() -> None:
    previous = extractive_summary(
        ["Carol: I am allergic to peanuts and moved to Lyon in 2021."], 50
    )
    summary = extractive_summary(CHAT, 100, previous_summary=previous)
    assert summary.count(LABEL) == 1
    assert "Carol: I am allergic to peanuts and moved to Lyon in 2021." in summary
    assert summary.index("Carol:") < summary.index("Bob:")


def test_previous_summary_is_favoured_over_an_equal_new_fact() -> None:
    previous = "Carol: The garage code is 4471."
    new = ["Dave: Locker code is 9902.", "Erin: Gym code is 3310."]  # unfavoured, both win
    assert "4471" not in extractive_summary([previous, *new], 26)
    summary = extractive_summary(new, 26, previous_summary=previous)
    assert "4471" in summary and "9902" in summary and "3310" not in summary


def test_a_full_previous_summary_yields_to_new_lines_instead_of_freezing() -> None:
    # room for one fact: the previous summary would fill it and leave out every new line
    previous = "Carol: The garage code is 4471."
    summary = extractive_summary(["Dave: Locker code: 9902."], 18, previous_summary=previous)
    assert "9902" in summary and count_tokens(summary) <= 18


def test_clauses_longer_than_the_budget_are_cut_into_phrases() -> None:
    facts = [
        f"Fact number {i}: the warehouse in sector {i} stores exactly {i}00 crates of blue "
        "ceramic tiles for the spring renovation project."
        for i in (1, 2, 3)
    ]
    summary = extractive_summary(facts, 25)
    assert count_tokens(summary) <= 25 and "…" not in summary
    assert "stores exactly 100 crates" in summary


def test_an_oversized_fact_keeps_whole_phrases_not_its_leading_words() -> None:
    # 24 tokens: neither line fits whole; the old cut kept "Invoice 7: paid ... on …"
    lines = [
        "Invoice 7: paid 300 dollars to Acme on 2024-03-02 by Maria",
        "Invoice 8: paid 450 dollars to Globex on 2024-03-09 by John",
    ]
    summary = extractive_summary(lines, 24)
    assert count_tokens(summary) <= 24 and "…" not in summary
    said = summary.lower()  # a line's first word is capitalised
    assert "paid 300 dollars to acme" in said or "paid 450 dollars to globex" in said


def test_a_cut_previous_summary_gives_way_to_the_facts_after_a_colon() -> None:
    previous = f"{LABEL}\nInvoice 7: paid 300 dollars to Acme on …"
    line = "Invoice 8: paid 450 dollars to Globex on 2024-03-09 by John"
    summary = extractive_summary([line], 24, previous_summary=previous)
    assert count_tokens(summary) <= 24
    assert "450 dollars" in summary and "Globex" in summary


@pytest.mark.process
def test_is_deterministic_across_hash_seeds() -> None:
    code = (
        "from memory.providers.summarize import extractive_summary as s\n"
        f"print(s({CHAT!r} * 2, 60))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1
    assert outputs.pop().strip() == extractive_summary(CHAT * 2, 60)


def test_general_bank_lines_stay_separate_without_speakers() -> None:
    lines = [
        "User prefers window seats on flights longer than 4 hours.",
        "User's daughter Maya turns 7 on 2 October.",
    ]
    summary = extractive_summary(lines, 100)
    assert summary.splitlines() == [LABEL, *lines]


def test_long_single_entry_is_truncated_not_dropped() -> None:
    line = "Bob: " + " ".join(f"Item{n} costs {n} dollars," for n in range(200))
    summary = extractive_summary([line], 20)
    assert count_tokens(summary) <= 20
    assert summary.startswith(f"{LABEL}\nBob: Item")


def test_a_clause_cut_to_fit_ends_in_an_ellipsis() -> None:
    line = "Bob: " + " plus ".join(f"item{n} costs {n} dollars" for n in range(50))
    summary = extractive_summary([line], 20)
    assert count_tokens(summary) <= 20
    assert summary.startswith(f"{LABEL}\nBob: item0 costs 0 dollars plus")
    assert summary.endswith(" …")


def test_only_small_talk_is_kept_rather_than_lost() -> None:
    summary = extractive_summary(["Alice: Hi!", "Bob: Thanks!"], 50)
    assert summary != LABEL


def test_empty_input_gives_the_label_and_tiny_budget_fails() -> None:
    assert extractive_summary([], 50) == LABEL
    with pytest.raises(ValueError, match="budget_tokens=3"):
        extractive_summary(CHAT, 3)


def test_split_speaker() -> None:
    assert split_speaker("Alice: hi there") == ("Alice", "hi there")
    assert split_speaker("Dr Mary Ann Lee: ok") == ("Dr Mary Ann Lee", "ok")
    assert split_speaker("Meeting at 10:30 with the team") == (
        None,
        "Meeting at 10:30 with the team",
    )
    assert split_speaker("plain fact") == (None, "plain fact")


def test_prompt_round_trip_through_the_parser() -> None:
    entries = [prompts.entry_line("I moved to\nLisbon {in} 2024", "Bob"), "Alice: ok"]
    messages = prompts.compaction_messages("Keep <entries> {{x}} facts", "Bob: old", entries, 321)
    assert [m.role for m in messages] == ["system", "user"]
    user = messages[1].content
    assert "Token budget: 321" in user.splitlines()
    assert "Keep <entries> {{x}} facts" in user
    assert parse_compaction_prompt(user) == (
        "Bob: old",
        ["Bob: I moved to Lisbon {in} 2024", "Alice: ok"],
        321,
    )


def test_parser_takes_free_text_when_there_is_no_entries_block() -> None:
    text = "Alice: one fact here\n\nBob: another fact there"
    previous, lines, budget = parse_compaction_prompt(text)
    assert (previous, lines) == ("", ["Alice: one fact here", "Bob: another fact there"])
    assert budget == 64


def test_render_fails_clearly_on_a_missing_variable() -> None:
    with pytest.raises(InvalidInput, match="needs a value for: budget_tokens, previous_summary"):
        prompts.render("compaction", instructions="x", entries="y")


def test_render_rejects_misspelt_variables_and_unknown_prompts() -> None:
    values: dict[str, str | int] = {
        "instructions": "",
        "previous_summary": "",
        "entries": "",
        "budget_tokens": 5,
    }
    with pytest.raises(InvalidInput, match="no placeholder for: entrees"):
        prompts.render("compaction", entrees="y", **values)
    with pytest.raises(InvalidInput, match=r"unknown prompt '\.\./x'"):
        prompts.render("../x")
    assert prompts.variables("compaction") == [
        "instructions",
        "budget_tokens",
        "previous_summary",
        "entries",
    ]
    assert {"compaction", "compaction_system"} <= set(prompts.available())


@pytest.mark.process
def test_summarizer_does_not_import_litellm() -> None:
    code = "import sys, memory.providers.summarize, memory.prompts; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
