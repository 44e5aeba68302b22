"""The LLM judge: deepeval metrics through a Completer.

The judge's own behaviour (scores, steps, runs, broken replies) is tested with a
ScriptedCompleter answering as the scripted judge; litellm's part (JSON-mode fallback,
token counts, blocked requests) against the scripted OpenAI-style server."""

from __future__ import annotations

import pytest
from judge_support import (
    FAITHFUL,
    PROMPT,
    SECOND_SOURCE,
    SECOND_SUMMARY,
    SOURCE,
    JudgeScript,
)

from memory.judge import CRITERIA, Evaluation, evaluate, judge_calls
from memory.ports import Completer
from memory.providers import llm
from memory.testing import HashingEmbedder

MODEL = "openai/judge-test"


def judged(
    judge: Completer | None = None,
    source: list[str] = SOURCE,
    summary: str = FAITHFUL,
    prompt: str | None = PROMPT,
    runs: int = 1,
) -> Evaluation:
    """Judge with `judge` (default: litellm on MODEL, no retries: the scripted server)."""
    return evaluate(
        source,
        summary,
        prompt=prompt,
        judge=judge or llm.LiteLLMCompleter(MODEL, timeout=20, retries=0),
        runs=runs,
        embedder=HashingEmbedder(),
    )


def test_scores_and_reasons_flow_into_the_record(script: JudgeScript, judge: Completer) -> None:
    result = judged(judge)
    assert result.judge == "openai/judge-test (deepeval)" and not result.offline
    assert [c.name for c in result.criteria] == [*CRITERIA, "summarization"]
    assert result.criterion("faithfulness").score == pytest.approx(0.9)
    assert result.criterion("summarization").reason == "scripted summarization reason"
    assert len(script.requests) == judge_calls(MODEL, 1)


def test_litellm_counts_tokens_and_calls(served: JudgeScript) -> None:
    result = judged()
    assert result.judge == f"{MODEL} (deepeval)" and not result.offline
    assert [c.name for c in result.criteria] == [*CRITERIA, "summarization"]
    expected = {"fact_coverage": 0.8, "faithfulness": 0.9, "conciseness": 0.6, "instructions": 0.7}
    for name, score in expected.items():
        item = result.criterion(name)
        assert item.score == pytest.approx(score) and item.error is None
        assert item.reason == f"scripted {name} reason"
    summarization = result.criterion("summarization")
    assert summarization.score == pytest.approx(1.0)
    assert summarization.reason == "scripted summarization reason"
    # fact coverage and faithfulness weigh twice (memory.judge.records.WEIGHTS)
    assert result.overall == pytest.approx((2 * 0.8 + 2 * 0.9 + 0.6 + 0.7 + 1.0) / 7, abs=1e-4)
    assert result.cost_tokens == 15 * len(served.requests)
    assert len(served.requests) == judge_calls(MODEL, 1)


def test_the_steps_carry_the_compression_ratio_and_the_prompt(
    script: JudgeScript, judge: Completer
) -> None:
    result = judged(judge)
    scored = script.asked("ReasonScore")
    concise = next(p for p in scored if "Conciseness:" in p)
    assert f"compression ratio {result.compression_ratio:.2f}" in concise
    instructions = next(p for p in scored if "Instructions:" in p)
    assert PROMPT in instructions
    assert all(PROMPT not in p for p in scored if p is not instructions)


def test_every_case_gets_fresh_metrics_and_its_own_assessment_questions(
    script: JudgeScript, judge: Completer
) -> None:
    judged(judge)
    judged(judge, SECOND_SOURCE, SECOND_SUMMARY)
    assert len(script.asked("Questions")) == 2  # asked again for the second case
    second_answers = script.asked("Answers")[2:]
    assert second_answers and all("Which company" in p for p in second_answers)
    assert not any("Which order number" in p for p in second_answers)


def test_runs_judge_again_and_report_mean_and_spread(script: JudgeScript, judge: Completer) -> None:
    script.scores["conciseness"] = 4

    def drift(body: dict[str, object]) -> None:  # the second run's conciseness is 8
        if sum("Conciseness:" in p for p in script.asked("ReasonScore")) == 1:
            script.scores["conciseness"] = 8

    original = script.answer

    def answer(body: dict[str, object]) -> tuple[int, str]:
        reply = original(body)  # type: ignore[arg-type]
        drift(body)
        return reply

    script.answer = answer  # type: ignore[method-assign]
    result = judged(judge, runs=2)
    concise = result.criterion("conciseness")
    assert concise.scores == [pytest.approx(0.4), pytest.approx(0.8)]
    assert concise.score == pytest.approx(0.6) and concise.spread == pytest.approx(0.2)
    assert result.criterion("faithfulness").spread == 0.0
    assert len(script.asked("Questions")) == 2  # a fresh SummarizationMetric per run
    assert result.runs == 2


def test_a_provider_without_json_schema_gets_json_object(served: JudgeScript) -> None:
    served.reject_json_schema = 1
    result = judged()
    formats = [(b.get("response_format") or {}).get("type") for b in served.requests]
    assert formats[0] == "json_schema"
    assert set(formats[1:]) == {"json_object"}  # remembered after the first refusal
    assert all(c.error is None for c in result.criteria)
    assert result.criterion("faithfulness").score == pytest.approx(0.9)


def test_a_provider_refusing_both_gets_the_schema_in_the_prompt(served: JudgeScript) -> None:
    original = served.answer

    def answer(body: dict[str, object]) -> tuple[int, str]:
        if body.get("response_format"):
            served.requests.append(body)  # type: ignore[arg-type]
            return 400, "response_format is not supported"
        return original(body)  # type: ignore[arg-type]

    served.answer = answer  # type: ignore[method-assign]
    result = judged()
    assert all(c.error is None for c in result.criteria)
    last = served.requests[-1]
    assert "response_format" not in last
    assert "It must match this JSON schema" in last["messages"][-1]["content"]


def test_invalid_json_fails_that_criterion_only(script: JudgeScript, judge: Completer) -> None:
    script.broken = {"faithfulness"}
    result = judged(judge)
    broken = result.criterion("faithfulness")
    assert broken.error is not None and "invalid JSON for ReasonScore" in broken.error
    assert broken.score == 0.0
    kept = [c for c in result.criteria if c.name != "faithfulness"]
    assert all(c.error is None for c in kept)
    assert result.overall == pytest.approx((2 * 0.8 + 0.6 + 0.7 + 1.0) / 5, abs=1e-4)


def test_invalid_json_in_summarization_keeps_the_geval_criteria(
    script: JudgeScript, judge: Completer
) -> None:
    script.broken = {"Claims"}
    result = judged(judge)
    assert "invalid JSON for Claims" in (result.criterion("summarization").error or "")
    assert result.criterion("fact_coverage").score == pytest.approx(0.8)


def test_without_a_prompt_the_instructions_are_not_asked(
    script: JudgeScript, judge: Completer
) -> None:
    result = judged(judge, prompt=None)
    assert "no prompt" in (result.criterion("instructions").error or "")
    assert not any("Instructions:" in p for p in script.asked("ReasonScore"))


def test_blocked_model_requests_fail_loudly() -> None:
    with pytest.raises(llm.ModelRequestsBlocked):
        judged()


def test_with_an_llm_judge_the_heuristic_ones_agreement_is_reported(
    script: JudgeScript, judge: Completer
) -> None:
    result = judged(judge, runs=2)
    agreement = result.agreement
    assert agreement is not None and "faithfulness" in agreement.criteria
    offline = evaluate(SOURCE, FAITHFUL, prompt=PROMPT, embedder=HashingEmbedder())  # alone
    for name, heuristic, by_llm in zip(
        agreement.criteria, agreement.heuristic, agreement.llm, strict=True
    ):
        assert heuristic == pytest.approx(offline.criterion(name).score, abs=1e-4)
        assert by_llm == result.criterion(name).score
    gaps = [abs(a - b) for a, b in zip(agreement.llm, agreement.heuristic, strict=True)]
    assert agreement.mean_gap == pytest.approx(sum(gaps) / len(gaps), abs=1e-4)
    assert offline.agreement is None  # one judge ran: nothing to compare
