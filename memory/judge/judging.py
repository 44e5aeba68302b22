"""`evaluate`: one summary judged against its source, by the heuristic or an LLM judge, N times."""

from __future__ import annotations

from collections.abc import Sequence

from memory.errors import InvalidInput
from memory.judge.heuristic import judge_heuristic
from memory.judge.records import (
    CRITERIA,
    HEURISTIC_LABEL,
    OFFLINE_JUDGE,
    Evaluation,
    RunScore,
    agreement_of,
    combine,
    overall,
)
from memory.ports import Completer, Embedder
from memory.providers.labels import is_offline
from memory.providers.tokens import count_tokens

MAX_RUNS = 20
"""Most runs one evaluation may ask for (each LLM run makes `LLM_CALLS_PER_RUN` calls)."""
LLM_CALLS_PER_RUN = len(CRITERIA) + 7
"""One GEval call per criterion (the steps are given), and SummarizationMetric's seven:
truths, claims, questions, answers for the source and for the summary, verdicts, reason."""


def uses_llm(judge_model: str | None) -> bool:
    """Return whether `judge_model` is a litellm model (not None nor the offline judge).

    Raises:
        InvalidInput: a blank name, or an offline `membank/` name that is not the judge's.
    """
    if judge_model is None:
        return False
    if not judge_model.strip():
        raise InvalidInput(
            f"the judge model is blank: give a litellm model name or {OFFLINE_JUDGE}"
        )
    if is_offline(judge_model):
        if judge_model != OFFLINE_JUDGE:
            raise InvalidInput(
                f"unknown offline judge {judge_model!r}: use {OFFLINE_JUDGE} (the heuristic "
                "judge) or a litellm model name such as openai/gpt-4o-mini"
            )
        return False
    return True


def check_runs(runs: int) -> None:
    """Check how many times a case is judged (the one place this range is checked).

    Raises:
        InvalidInput: runs outside 1-MAX_RUNS.
    """
    if not 1 <= runs <= MAX_RUNS:
        raise InvalidInput(f"runs must be 1-{MAX_RUNS} (judge runs per case), got {runs}")


def judge_calls(judge_model: str | None, runs: int) -> int:
    """Return how many LLM calls judging one summary `runs` times makes (0 offline)."""
    return LLM_CALLS_PER_RUN * runs if uses_llm(judge_model) else 0


def evaluate(
    source: Sequence[str],
    summary: str,
    *,
    prompt: str | None = None,
    judge: Completer | None = None,
    runs: int = 1,
    embedder: Embedder,
) -> Evaluation:
    """Return the evaluation of `summary` against its `source` entries.

    Args:
        source: The original entries as text lines ("speaker: text" for conversations).
        summary: The summary to judge.
        prompt: The compaction prompt the summary was written for (judged by "instructions").
        judge: The judge model, for deepeval's GEval and SummarizationMetric through it
            (`memory.prompt_lab.run.judge_for` makes one from a model name, at the edge);
            None for the offline heuristic judge.
        runs: How many times to judge the same case (1-MAX_RUNS, checked by the caller's
            request: `check_runs`); each criterion reports the mean and the spread.
        embedder: The embedder the heuristic judge compares sentences with.

    Returns:
        The Evaluation, labelled with the judge that produced it.

    Raises:
        InvalidInput: no source lines or a blank summary.
        ProviderError: the judge model could not be reached (invalid JSON from it is the
            failed criterion's `error` instead).
    """
    lines = [line for line in source if line.strip()]
    if not lines:
        raise InvalidInput("the source has no entries: give the entries the summary was made from")
    if not summary.strip():
        raise InvalidInput("the summary is empty: give the summary text to judge")
    ratio = round(count_tokens(summary) / max(count_tokens("\n".join(lines)), 1), 4)
    if judge is not None:
        from memory.judge.llm_judge import judge_with_llm

        judged = judge_with_llm(
            lines, summary, prompt=prompt, judge=judge, runs=runs, compression_ratio=ratio
        )
        offline = judge_heuristic(
            lines, summary, prompt=prompt, embedder=embedder, compression_ratio=ratio
        )  # both ran: say how far the offline judge is from the LLM's
        return judged.model_copy(
            update={"agreement": agreement_of(judged.criteria, offline.scores)}
        )
    result = judge_heuristic(
        lines, summary, prompt=prompt, embedder=embedder, compression_ratio=ratio
    )
    # deterministic: every run gives the same scores, so one computation stands for all
    per_run: dict[str, list[RunScore]] = {score.name: [score] * runs for score in result.scores}
    criteria = [combine(name, per_run[name]) for name in CRITERIA]
    return Evaluation(
        criteria=criteria,
        overall=overall(criteria),
        judge=HEURISTIC_LABEL,
        offline=True,
        runs=runs,
        cost_tokens=0,
        compression_ratio=ratio,
        flags=result.flags,
    )
