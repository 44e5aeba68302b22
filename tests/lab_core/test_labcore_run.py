"""Compaction tests on pasted, synthetic and bank entries: the real plan and summarizer, the
judge, the planted-fact diff, the cost preview; a bank is never changed."""

from __future__ import annotations

import pytest
from compaction_support import make_bank, write_turns

from memory import banks, entries
from memory.context import Context
from memory.errors import InvalidInput, NotFound, ProviderError
from memory.judge import HEURISTIC_LABEL, judge_calls
from memory.prompt_lab import (
    BankSource,
    PastedSource,
    SyntheticSource,
    preview,
    run_test,
    synthesize,
)
from memory.providers.tokens import count_tokens
from memory.store.lance import LanceStore
from memory.testing import ScriptedCompleter

PASTED = (
    "user: Hi, my Brevo 3000 grinder jams.\n"
    "assistant: Sorry to hear that. Which order is it?\n"
    "Dana (customer): Order 88213, delivered on October 2, 2026.\n"
    "assistant: Thanks, a technician will call you.\n"
    "user: Please call in the mornings.\n"
)
PROMPT = "Keep order numbers, dates and the customer's preferences."


def scripted(ctx: Context, *replies: str) -> ScriptedCompleter:
    completer = ScriptedCompleter().enqueue(*replies)
    ctx.completer = lambda: completer
    return completer


def test_a_pasted_run_summarizes_all_but_the_newest_with_the_prompt(ctx: Context) -> None:
    completer = scripted(ctx, "Dana's grinder (order 88213, delivered October 2, 2026) jams.")
    steps: list[str] = []

    run = run_test(ctx, PastedSource(text=PASTED), prompt=PROMPT, progress=steps.append)

    assert run.original[0].content == "Hi, my Brevo 3000 grinder jams."
    assert len(run.original) == 5
    assert [(e.speaker, e.content) for e in run.surviving] == [
        ("user", "Please call in the mornings.")
    ]
    assert run.summary == "Dana's grinder (order 88213, delivered October 2, 2026) jams."
    (asked,) = completer.calls
    sent = asked[-1].content
    assert PROMPT in sent
    assert "Dana: Order 88213, delivered on October 2, 2026." in sent
    assert "mornings" not in sent  # the newest entry is kept verbatim, not summarized
    assert run.summarizer.startswith("scripted/test")
    assert run.evaluation.judge == HEURISTIC_LABEL
    assert {c.name for c in run.evaluation.criteria} >= {"fact_coverage", "faithfulness"}
    assert run.fact_diff is None
    assert (run.bank, run.source_label) == (None, "pasted entries")
    assert steps[0] == "loading entries" and steps[-1] == "saving the run"
    assert any(step.startswith("judging with heuristic judge") for step in steps)


def test_the_default_summarizer_is_the_real_extractive_one(ctx: Context) -> None:
    run = run_test(ctx, PastedSource(text=PASTED), prompt=PROMPT, save=False)

    assert run.summarizer == "membank/extractive: extractive summarizer (offline)"
    assert run.summary.startswith("[extractive summary]")
    assert run.evaluation.overall > 0


def test_thresholds_plan_like_compaction_does(ctx: Context) -> None:
    text = "".join(f"user: note {i} about order {1000 + i}.\n" for i in range(12))
    completer = scripted(ctx, "orders 1000 to 1007", "orders 1000 to 1010")

    over = run_test(ctx, PastedSource(text=text), prompt=PROMPT, max_turns=10, save=False)
    under = run_test(ctx, PastedSource(text=text), prompt=PROMPT, max_turns=50, save=False)

    # over max_turns 10: the partition ends at half (5), one of them the summary
    assert [e.content for e in over.surviving] == [
        f"note {i} about order {1000 + i}." for i in (8, 9, 10, 11)
    ]
    # under its thresholds: tested as if just over them, all but the newest summarized
    assert [e.content for e in under.surviving] == ["note 11 about order 1011."]
    assert "order 1007" in completer.calls[0][-1].content
    assert "order 1008" not in completer.calls[0][-1].content


def test_a_bank_run_reads_the_bank_and_changes_nothing(ctx: Context) -> None:
    bank = make_bank(ctx, max_turns=100)
    write_turns(ctx, bank, "c-1", 8)
    write_turns(ctx, bank, "c-2", 3, start=50)
    store = ctx.store
    assert isinstance(store, LanceStore)
    table = store.entries_table(bank.id)
    before = (table.version, store.version_count(bank.id), store.count(bank.id))
    thread = entries.load(ctx, bank, "c-1")
    record = banks.get(ctx, bank.id)
    completer = scripted(ctx, "Orders #1000 to #1003.")

    run = run_test(ctx, BankSource(bank="chat"), prompt=PROMPT, max_turns=6)

    after_table = store.entries_table(bank.id)
    assert (after_table.version, store.version_count(bank.id), store.count(bank.id)) == before
    assert entries.load(ctx, bank, "c-1") == thread
    assert banks.get(ctx, bank.id) == record
    assert run.bank == bank.id
    assert run.source_label == "bank chat, key c-1 (the largest of its 2 keys; --key picks another)"
    assert [e.content for e in run.original] == [e.content for e in thread]
    # max_turns 6 keeps 3 - 1 (the summary) = 2 verbatim, as `membank compact` would
    assert [e.content for e in run.surviving] == [e.content for e in thread[-2:]]
    sent = completer.calls[0][-1].content
    assert "order #1005" in sent and "order #1006" not in sent


def test_a_bank_run_on_one_key_and_the_bank_prompt_left_alone(ctx: Context) -> None:
    bank = make_bank(ctx)
    write_turns(ctx, bank, "c-1", 4)
    write_turns(ctx, bank, "c-2", 3, start=50)
    scripted(ctx, "Orders #1050 and #1051.")

    run = run_test(ctx, BankSource(bank=bank.id, key="c-2"), prompt="Only orders.")

    assert run.source_label == "bank chat, key c-2"
    assert run.original[0].content.startswith("Turn 50:")
    assert banks.get(ctx, bank.id).compaction_prompt == "Keep every fact, name, number and date."


def test_a_synthetic_run_reports_the_exact_planted_fact_diff(ctx: Context) -> None:
    source = SyntheticSource(description="support for espresso machines", count=20, seed=4)
    made = synthesize(source)
    number, day, name, preference = made.facts
    summary = (
        f"The {number.text} is {number.value}. The {name.text} is Someone Else. "
        f"The customer mentioned the {day.text}."
    )
    scripted(ctx, summary)

    run = run_test(ctx, source, prompt=PROMPT)

    assert [e.content for e in run.original] == [e.content for e in made.entries]
    assert run.fact_diff is not None
    newest = made.entries[-1].content
    # the newest entry is kept verbatim: a fact planted there survives without the summary
    kept_verbatim = [f for f in (day, preference) if f.value in newest]
    assert run.fact_diff.kept == [number, *kept_verbatim]
    assert run.fact_diff.contradicted == [name]
    assert run.fact_diff.dropped == [f for f in (day, preference) if f not in kept_verbatim]
    assert run.source_label == "20 synthetic entries (template generator (offline))"


def test_preview_counts_entries_tokens_and_judge_calls(ctx: Context) -> None:
    bank = make_bank(ctx)
    stored = write_turns(ctx, bank, "c-1", 5)

    cost = preview(ctx, BankSource(bank="chat"), prompt=PROMPT, runs=3)
    llm = preview(ctx, BankSource(bank="chat"), prompt=PROMPT, judge_model="openai/x", runs=3)

    assert (cost.entries, cost.tokens) == (5, sum(e.token_count for e in stored))
    assert cost.judge_calls == 0 and cost.judge == HEURISTIC_LABEL
    assert llm.judge_calls == judge_calls("openai/x", 3) > judge_calls("openai/x", 1) > 0
    assert llm.judge == "openai/x (deepeval)"
    assert cost.summarizer == "membank/extractive: extractive summarizer (offline)"
    pasted = preview(ctx, PastedSource(text=PASTED), prompt=PROMPT)
    assert pasted.tokens == sum(
        count_tokens(line.split(": ", 1)[1]) for line in PASTED.splitlines()
    )


def test_the_judge_defaults_to_the_settings_judge(ctx: Context) -> None:
    ctx.settings = ctx.settings.model_copy(update={"judge_model": "openai/gpt-4o-mini"})

    cost = preview(ctx, PastedSource(text=PASTED), prompt=PROMPT, runs=2)
    offline = preview(
        ctx, PastedSource(text=PASTED), prompt=PROMPT, judge_model="membank/heuristic-judge"
    )

    assert (cost.judge, cost.judge_calls) == (
        "openai/gpt-4o-mini (deepeval)",
        judge_calls("openai/gpt-4o-mini", 2),
    )
    assert (offline.judge, offline.judge_calls) == (HEURISTIC_LABEL, 0)


def test_preview_of_llm_synthetic_entries_generates_nothing(ctx: Context) -> None:
    ctx.settings = ctx.settings.model_copy(update={"llm_model": "openai/gpt-4o-mini"})
    source = SyntheticSource(description="support", count=30)

    cost = preview(ctx, source, prompt=PROMPT)  # requests are blocked: any call would fail

    assert (cost.entries, cost.tokens) == (30, 30 * 40)
    assert cost.summarizer == "openai/gpt-4o-mini: openai/gpt-4o-mini (LLM via litellm)"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"prompt": "  "}, "compaction prompt is empty"),
        ({"runs": 0}, "runs must be 1-20"),
        ({"runs": 21}, "runs must be 1-20"),
        ({"max_turns": -1}, "max_turns must be 0-"),
        ({"judge_model": "membank/nope"}, "unknown offline judge"),
        ({"judge_model": "gpt-5-turbo"}, "judge: unknown model 'gpt-5-turbo': litellm cannot"),
        ({"judge_model": "nosuchprovider/x"}, "judge: unknown model 'nosuchprovider/x'"),
    ],
)
def test_bad_options_are_refused_before_anything_runs(
    ctx: Context, options: dict[str, object], message: str
) -> None:
    completer = scripted(ctx)
    values: dict[str, object] = {"prompt": PROMPT, **options}

    with pytest.raises(InvalidInput, match=message):
        run_test(ctx, PastedSource(text=PASTED), **values)  # type: ignore[arg-type]

    assert completer.calls == []
    assert ctx.store.lab_run_bodies(ctx.account) == []


def test_sources_with_nothing_to_test_are_refused(ctx: Context) -> None:
    bank = make_bank(ctx)
    with pytest.raises(InvalidInput, match="has no entries: write some"):
        run_test(ctx, BankSource(bank="chat"), prompt=PROMPT)
    with pytest.raises(InvalidInput, match="no entries under key 'nope'"):
        run_test(ctx, BankSource(bank="chat", key="nope"), prompt=PROMPT)
    with pytest.raises(InvalidInput, match="at least 2 entries"):
        run_test(ctx, PastedSource(text="user: only one"), prompt=PROMPT)
    with pytest.raises(NotFound, match="no bank 'missing'"):
        run_test(ctx, BankSource(bank="missing"), prompt=PROMPT)
    assert banks.get(ctx, bank.id).name == "chat"


def test_a_failing_summarizer_saves_nothing(ctx: Context) -> None:
    scripted(ctx, ProviderError("model down"))  # type: ignore[arg-type]

    with pytest.raises(ProviderError, match="model down"):
        run_test(ctx, PastedSource(text=PASTED), prompt=PROMPT)

    assert ctx.store.lab_run_bodies(ctx.account) == []


def test_a_run_warns_when_its_budget_is_at_least_the_source(ctx: Context) -> None:
    roomy = run_test(ctx, PastedSource(text=PASTED), prompt=PROMPT, max_tokens=8000, save=False)
    tight = run_test(ctx, PastedSource(text=PASTED), prompt=PROMPT, save=False)

    source = sum(count_tokens(e.content) for e in roomy.original[:-1])  # the newest is kept
    assert (roomy.source_tokens, tight.source_tokens) == (source, source)
    assert roomy.budget is not None and roomy.budget >= source
    assert roomy.budget_warning() == (
        f"The summary budget ({roomy.budget:,} tokens) is at least the source ({source} tokens): "
        "nothing had to be dropped, so the scores say little. Lower the max size (or run a "
        "suite, which targets 25% of the source)."
    )
    assert tight.budget is not None and tight.budget < source
    assert tight.budget_warning() is None
