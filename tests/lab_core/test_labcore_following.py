"""Offline, the prompt matters: the extractive summarizer follows the prompt's checkable
instructions (the judge's own parser), in the lab and in compaction, and says per run which
instructions it followed and which it cannot follow offline."""

from __future__ import annotations

from compaction_support import make_bank

from memory import entries
from memory.compaction.bank import compact_if_over
from memory.config import get_template
from memory.context import Context
from memory.judge.rules import parse_rules
from memory.judge.text import numbers
from memory.models import EntryIn
from memory.ops import lab
from memory.prompt_lab import PastedSource, TestOptions
from memory.providers.extractive import guided_summary

SUPPORT = get_template("customer-support").compaction_prompt or ""
TERSE = "Write one short sentence. Drop all numbers and names."
CHAT = [
    "Dana: Hi, my order 48213 arrived damaged on March 3.",
    "Agent: Sorry to hear that. I can refund 120 dollars or send a replacement.",
    "Dana: Please send a replacement to my office in Leeds.",
    "Agent: Done, the replacement ships on March 5 with tracking number 99812.",
    "Dana: The box also had a broken hinge, which is annoying.",
    "Agent: I have opened a ticket about the hinge and our manager Priya will call you.",
    "Dana: Thanks, bye!",
]


def test_prompts_a_and_b_give_different_summaries_offline(ctx: Context) -> None:
    request = lab.LabTest(
        source=PastedSource(text="\n".join(CHAT)), options=TestOptions(prompt=SUPPORT)
    )
    first, second = lab.compare(ctx, request, TestOptions(prompt=TERSE))

    assert first.summary != second.summary
    kept = numbers(first.summary)
    assert {"48213", "99812"} <= kept and len(kept) >= 3  # A keeps the numbers
    assert not numbers(second.summary)  # B was told to drop them
    assert "Dana" not in second.summary and "Priya" not in second.summary
    assert len([s for s in second.summary.splitlines()[1:] if s.strip()]) == 1
    said = {n.instruction: n.status for n in second.following}
    assert said == {
        "one sentence": "followed",
        "drop names": "followed",
        "drop numbers": "followed",
    }
    kept_note = {n.instruction: n for n in first.following}["keep numbers"]
    assert kept_note.status in {"followed", "partly followed"}  # as the budget allows
    assert "kept" in kept_note.detail


def test_a_language_it_cannot_write_is_reported_not_faked() -> None:
    from memory.providers.extractive import following

    summary = guided_summary("Write the summary in French.", CHAT, 80)
    (note,) = following("Write the summary in French.", CHAT, summary)
    assert note.status == "cannot follow offline"
    assert "cannot translate" in note.detail


def test_sentences_no_rule_reads_are_listed_as_read_only_by_an_llm() -> None:
    rules = parse_rules("Be warm and empathetic. Use at most 2 sentences.")
    assert rules.unread == ("Be warm and empathetic",)
    assert [(x.count, x.unit) for x in rules.limits] == [(2, "sentence")]


def test_a_topic_to_drop_is_dropped_and_bullets_are_bullets() -> None:
    summary = guided_summary("Leave out anything about the hinge. Use bullet points.", CHAT, 120)
    body = summary.splitlines()[1:]
    assert body and all(row.startswith("- ") for row in body)
    assert "hinge" not in summary


def test_with_no_instructions_the_summary_is_the_plain_extractive_one() -> None:
    from memory.providers.summarize import extractive_summary

    assert guided_summary("", CHAT, 60) == extractive_summary(CHAT, 60)


def test_a_banks_prompt_matters_when_it_compacts_offline(ctx: Context) -> None:
    summaries = []
    for name, prompt in (("a", SUPPORT), ("b", TERSE)):
        bank = make_bank(ctx, name, compaction_prompt=prompt, max_turns=4)
        items = [
            EntryIn(key="k", speaker=row.split(": ")[0], content=row.split(": ", 1)[1])
            for row in CHAT
        ]
        entries.write(ctx, bank, items)
        compact_if_over(ctx, bank, "k")
        (summary,) = [e.content for e in entries.load(ctx, bank, "k") if e.kind == "summary"]
        summaries.append(summary)
    assert summaries[0] != summaries[1]
    assert numbers(summaries[0]) and not numbers(summaries[1])
