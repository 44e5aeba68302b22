"""Suites: prompts over many cases and rounds, pass rates against thresholds, fact survival per
round, fingerprints; the CLI exits 1 when a prompt's pass rate is below the one asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from compaction_support import make_bank, run

from memory import entries
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import EntryIn
from memory.ops import lab
from memory.prompt_lab import BankSource, PastedSource, SyntheticSource
from memory.prompt_lab.suite import SuiteRequest

SUPPORT = "Keep the customer's issues, commitments, dates and numbers. Drop greetings."
TERSE = "Write one short sentence. Drop all numbers and names."


def _bank(ctx: Context, keys: int = 4) -> None:
    bank = make_bank(ctx, "support")
    rows = [
        EntryIn(key=f"c{k}", speaker=who, content=text)
        for k in range(keys)
        for who, text in (
            ("Dana", f"My order {4400 + k} arrived broken on March {k + 3}."),
            ("Agent", f"I refunded {20 + k} dollars and a courier collects it on Friday."),
            ("Dana", "Please call me in the mornings, I work late."),
            ("Agent", f"Your ticket number is {9100 + k}; Priya will call you tomorrow."),
            ("Dana", "Thanks, that works."),
            ("Agent", "You are welcome, have a nice day."),
        )
    ]
    entries.write(ctx, bank, rows)


def test_a_suite_runs_prompts_over_keys_and_rounds(ctx: Context) -> None:
    _bank(ctx)
    request = SuiteRequest(
        source=BankSource(bank="support"),
        prompts=[SUPPORT, TERSE],
        cases=3,
        rounds=3,
        thresholds={"faithfulness": 0.8, "fact_coverage": 0.4},
        min_pass_rate=0.5,
    )
    result = lab.run_suite(ctx, request)
    assert len(result.cases) == 6 and len(result.prompts) == 2
    assert all(len(c.survival) == 3 for c in result.cases)
    first, second = result.prompts
    assert sum(first.survival) > sum(second.survival)  # B drops the numbers it was told to
    assert {c.summary for c in result.cases if c.prompt == SUPPORT}.isdisjoint(
        c.summary for c in result.cases if c.prompt == TERSE
    )
    assert set(first.criterion_pass) == {"faithfulness", "fact_coverage"}
    assert first.pass_rate == sum(c.ok for c in result.cases if c.prompt == SUPPORT) / 3
    assert len({c.fingerprint for c in result.cases}) == 3  # three keys, three entry sets
    assert lab.run_suite(ctx, request).fingerprint == result.fingerprint  # same entries


def test_the_same_numbers_from_a_frozen_set(ctx: Context, tmp_path: Path) -> None:
    _bank(ctx, keys=2)
    request = SuiteRequest(source=BankSource(bank="support"), prompts=[SUPPORT], cases=2)
    drafts = lab.suite_set(ctx, request)
    text = "\n".join(json.dumps(d.model_dump(mode="json", exclude_none=True)) for d in drafts)
    frozen = SuiteRequest(source=PastedSource(text=text), prompts=[SUPPORT], cases=2)
    a, b = lab.run_suite(ctx, request), lab.run_suite(ctx, frozen)
    assert [c.survival for c in a.cases] == [c.survival for c in b.cases]
    assert [c.scores for c in a.cases] == [c.scores for c in b.cases]


def test_a_synthetic_suite_counts_planted_facts(ctx: Context) -> None:
    source = SyntheticSource(description="late deliveries", count=20)
    result = lab.run_suite(ctx, SuiteRequest(source=source, prompts=[SUPPORT], cases=2, rounds=2))
    assert [c.case for c in result.cases] == ["seed 0", "seed 1"]
    assert all(0 <= v <= 1 for c in result.cases for v in c.survival)


def test_a_budget_at_least_the_source_is_warned_about(ctx: Context) -> None:
    text = "ann: My order 4471 arrived broken.\nbob: I will refund 15 dollars."
    request = SuiteRequest(source=PastedSource(text=text), prompts=[SUPPORT], rounds=1, target=1.0)
    result = lab.run_suite(ctx, request)
    assert any("at least the source" in w for w in result.warnings)


@pytest.mark.parametrize(
    "fields,message",
    [
        ({"prompts": []}, "at least one"),
        ({"rounds": 0}, "rounds must be"),
        ({"target": 0}, "target"),
        ({"thresholds": {"speed": 0.5}}, "unknown criterion"),
        ({"thresholds": {"faithfulness": 2}}, "not in 0-1"),
    ],
)
def test_bad_suite_options_are_refused(fields: dict[str, object], message: str) -> None:
    values: dict[str, object] = {"source": BankSource(bank="x"), "prompts": [SUPPORT], **fields}
    with pytest.raises(InvalidInput, match=message):
        SuiteRequest.model_validate(values)


def test_the_cli_exits_1_when_the_pass_rate_is_below_the_one_asked_for(ctx: Context) -> None:
    _bank(ctx)
    base = ("test-compaction", "--bank", "support", "--suite", "2", "--prompt", SUPPORT)
    code, out, err = run(*base, "--threshold", "faithfulness=0.0", context=ctx)
    assert code == 0, err
    assert "pass rate" in out and "fingerprint" in out and "suite passed" in out
    code, out, _ = run(*base, "--threshold", "conciseness=1.01", context=ctx)
    assert code == 2  # a threshold out of range is bad input
    code, out, _ = run(*base, "--threshold", "fact_coverage=0.99", context=ctx)
    assert code == 1 and "suite FAILED" in out
    code, out, err = run(*base, "--threshold", "faithfulness", context=ctx)
    assert code == 2 and "CRITERION=X" in err
