"""The recall probe: questions about planted facts answered by retrieval from the summary vs
from the full history (offline, lexical), in the run record and the CLI."""

from __future__ import annotations

from compaction_support import run as run_cli

from memory.context import Context
from memory.prompt_lab import SyntheticSource, run_test, synthesize
from memory.prompt_lab.probe import recall_probe
from memory.testing import ScriptedCompleter

SOURCE = SyntheticSource(description="support for espresso machines", count=20, seed=4)


def test_a_summary_that_drops_facts_recalls_less_than_one_that_keeps_them() -> None:
    made = synthesize(SOURCE)
    history = [e.content for e in made.entries]
    keeping = " ".join(f"The {f.text} is {f.value}." for f in made.facts)
    dropping = f"The {made.facts[0].text} is {made.facts[0].value}. The customer was helped."

    full = recall_probe(made.facts, keeping, history)
    half = recall_probe(made.facts, dropping, history)

    assert full.from_history == len(made.facts)  # the history answers every question
    assert full.from_summary == len(made.facts) and full.ratio == 1.0
    assert half.from_summary == 1 and half.ratio < full.ratio
    assert half.answers[0].summary_answer == dropping.split(". ")[0] + "."


def test_a_run_records_the_probe_and_the_cli_prints_it(ctx: Context) -> None:
    made = synthesize(SOURCE)
    first = made.facts[0]
    reply = f"The {first.text} is {first.value}."
    completer = ScriptedCompleter().enqueue(reply, reply)
    ctx.completer = lambda: completer

    run = run_test(ctx, SOURCE, prompt="Keep numbers.")

    assert run.probe is not None and run.probe.from_history == len(made.facts)
    assert 1 <= run.probe.from_summary < run.probe.from_history
    code, out, err = run_cli(
        "test-compaction", "--synthetic", SOURCE.description, "--seed", "4",
        "--prompt", "Keep numbers.", context=ctx,
    )  # fmt: skip
    assert code == 0, err
    assert "recall probe: 4 questions; answered from the summary" in out and "ratio" in out


def test_the_probe_matches_word_forms_by_the_judges_stems() -> None:
    from memory.prompt_lab.records import PlantedFact

    fact = PlantedFact(kind="number", text="shipping refund", value="15 dollars")
    answer = "15 dollars were refunded for the shipped box."
    decoy = "A refund form is attached."  # shares "refund" as written, not the value

    probe = recall_probe([fact], f"{answer} {decoy}", [answer, decoy])

    # a trailing-"s" stemmer matched neither "refunded" nor "shipped" and took the decoy
    assert probe.answers[0].summary_answer == answer
    assert probe.from_summary == 1 and probe.from_history == 1
