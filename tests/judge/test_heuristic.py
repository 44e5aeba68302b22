"""The heuristic judge: ranking on fixtures, invented facts flagged, instructions checked."""

from __future__ import annotations

from typing import Any

import pytest
from judge_support import FAITHFUL, INVENTED, INVENTED_NAME, OFF_TOPIC, PROMPT, SOURCE

from memory.errors import InvalidInput
from memory.judge import CRITERIA, HEURISTIC_LABEL, Evaluation, evaluate, judge_calls
from memory.judge.records import WEIGHTS
from memory.ops.lab import JudgeRequest
from memory.ports import Embedder
from memory.prompts import compaction_messages
from memory.providers.embed import MINILM_NAME, embedder_for
from memory.providers.extractive import ExtractiveCompleter
from memory.testing import HashingEmbedder


@pytest.fixture(scope="module", params=["hashing", "minilm"])
def embedder(request: pytest.FixtureRequest) -> Embedder:
    """The test embedder and the offline default (MiniLM), so ranking holds for both."""
    return HashingEmbedder(384) if request.param == "hashing" else embedder_for(MINILM_NAME, 384)


def judged(summary: str, embedder: Embedder, prompt: str | None = PROMPT) -> Evaluation:
    return evaluate(SOURCE, summary, prompt=prompt, embedder=embedder)


def test_a_faithful_summary_beats_an_invented_number_and_an_off_topic_one(
    embedder: Embedder,
) -> None:
    faithful, invented, off = (judged(s, embedder) for s in (FAITHFUL, INVENTED, OFF_TOPIC))
    assert faithful.overall > invented.overall > off.overall
    good, bad = faithful.criterion("faithfulness"), invented.criterion("faithfulness")
    assert good.score > bad.score
    assert "invented number: 4200" in invented.flags
    assert not [flag for flag in faithful.flags if flag.startswith("invented")]
    assert off.criterion("fact_coverage").score < faithful.criterion("fact_coverage").score


def test_an_invented_name_is_flagged_and_costs_faithfulness(embedder: Embedder) -> None:
    faithful, invented = judged(FAITHFUL, embedder), judged(INVENTED_NAME, embedder)
    assert "invented name: Bob" in invented.flags
    assert invented.criterion("faithfulness").score < faithful.criterion("faithfulness").score


def test_the_record_is_labelled_offline_with_every_criterion(embedder: Embedder) -> None:
    result = judged(FAITHFUL, embedder)
    assert result.judge == HEURISTIC_LABEL
    assert result.offline and result.cost_tokens == 0 and result.runs == 1
    assert [c.name for c in result.criteria] == list(CRITERIA)
    assert all(0.0 <= c.score <= 1.0 and c.reason for c in result.criteria)
    assert 0.0 < result.compression_ratio < 1.0
    assert judge_calls(None, 3) == 0


def test_runs_repeat_the_deterministic_judge_with_no_spread() -> None:
    result = evaluate(SOURCE, FAITHFUL, prompt=PROMPT, runs=3, embedder=HashingEmbedder(384))
    once = evaluate(SOURCE, FAITHFUL, prompt=PROMPT, embedder=HashingEmbedder(384))
    for many, one in zip(result.criteria, once.criteria, strict=True):
        assert many.scores == [one.score] * 3
        assert many.spread == 0.0 and many.score == one.score
    assert result.runs == 3


def test_instructions_say_what_was_checked() -> None:
    result = judged(FAITHFUL, HashingEmbedder(384))
    reason = result.criterion("instructions").reason
    assert "under 60 words" in reason and "keep names" in reason and "drop greetings" in reason
    long_prompt = "Summarize in at most 10 words as bullet points."
    over = judged(FAITHFUL, HashingEmbedder(384), prompt=long_prompt).criterion("instructions")
    assert over.score < 0.5
    assert "at most 10 words: 30 (over)" in over.reason and "bullet points: 0 of 1" in over.reason


def test_without_a_prompt_instructions_are_left_out_of_the_overall() -> None:
    result = judged(FAITHFUL, HashingEmbedder(384), prompt=None)
    item = result.criterion("instructions")
    assert item.error is not None and "no prompt" in item.error
    others = [(c.score, WEIGHTS.get(c.name, 1.0)) for c in result.criteria if c.error is None]
    mean = sum(s * w for s, w in others) / sum(w for _, w in others)
    assert result.overall == pytest.approx(mean, abs=1e-4)


@pytest.mark.parametrize(
    ("source", "summary", "runs", "message"),
    [
        ([], FAITHFUL, 1, "no entries"),
        (["  "], FAITHFUL, 1, "no entries"),
        (SOURCE, "  \n", 1, "summary is empty"),
    ],
)
def test_bad_input_is_refused(source: list[str], summary: str, runs: int, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        evaluate(source, summary, runs=runs, embedder=HashingEmbedder(384))


@pytest.mark.parametrize(
    ("options", "message"),
    [({"runs": 0}, "runs must be"), ({"judge_model": "membank/extractive"}, "unknown offline")],
)
def test_a_judge_request_is_checked_when_made(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        JudgeRequest(summary=FAITHFUL, pasted="\n".join(SOURCE), **options)


def test_a_statement_given_to_the_wrong_speaker_is_flagged(embedder: Embedder) -> None:
    swapped = "agent: My order #88213 arrived with a cracked water tank on May 3."
    right = "Dana: My order #88213 arrived with a cracked water tank on May 3."
    wrong, good = judged(swapped, embedder), judged(right, embedder)
    assert any(flag.startswith("misattributed: agent did not say") for flag in wrong.flags)
    assert good.flags == []
    assert wrong.criterion("faithfulness").score < good.criterion("faithfulness").score


def test_the_extractive_summary_raises_no_flags(embedder: Embedder) -> None:
    summary = ExtractiveCompleter().complete(compaction_messages(PROMPT, "", SOURCE, 40))
    result = judged(summary, embedder)
    assert result.flags == []
    assert result.criterion("faithfulness").score > 0.9
