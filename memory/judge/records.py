"""The judge's record: one score per criterion (mean and spread over runs), overall, label, cost."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean, pstdev

from pydantic import BaseModel, ConfigDict

HEURISTIC_LABEL = "heuristic judge (offline)"
"""The label shown wherever the offline judge's scores appear."""
OFFLINE_JUDGE = "membank/heuristic-judge"
"""The judge model name that selects the heuristic judge (the default of MEMBANK_JUDGE_MODEL)."""
CRITERIA = ("fact_coverage", "faithfulness", "conciseness", "instructions")
"""The criteria every judge scores, in the order they are shown."""
WEIGHTS = {"fact_coverage": 2.0, "faithfulness": 2.0}
"""Weights of criteria in the overall score (others weigh 1): a compaction summary is there
to keep the facts and say nothing else, so coverage and faithfulness count twice."""
SUMMARIZATION = "summarization"
"""The extra criterion the LLM judge adds: deepeval's SummarizationMetric."""


class CriterionScore(BaseModel):
    """One criterion's score (0-1, the mean over runs) with the judge's reason."""

    model_config = ConfigDict(extra="forbid")

    name: str
    score: float
    reason: str
    scores: list[float]
    """One score per run."""
    spread: float
    """Population standard deviation of `scores` (0.0 for one run)."""
    error: str | None = None
    """Why this criterion could not be judged (score 0, left out of the overall)."""


class Agreement(BaseModel):
    """How close the offline heuristic judge came to the LLM judge on the same summary."""

    model_config = ConfigDict(extra="forbid")

    criteria: list[str]
    """The criteria both judges scored (no error on either side)."""
    llm: list[float]
    heuristic: list[float]
    mean_gap: float
    """Mean absolute difference of the two judges' scores over `criteria`."""

    @property
    def agreement(self) -> float:
        """1 - mean_gap: 1.0 when the two judges give the same scores."""
        return round(1.0 - self.mean_gap, 4)


class Evaluation(BaseModel):
    """A summary judged against its source: per criterion, overall, who judged, at what cost."""

    model_config = ConfigDict(extra="forbid")

    criteria: list[CriterionScore]
    overall: float
    """Mean of the criteria that have no error (0.0 when every one failed)."""
    judge: str
    """HEURISTIC_LABEL, or "<model> (deepeval)"."""
    offline: bool
    runs: int
    cost_tokens: int
    """Tokens the judge model spent (0 offline)."""
    compression_ratio: float
    """Summary tokens / source tokens."""
    flags: list[str]
    """Problems found, e.g. "invented number: 4200", "invented name: Bob"."""
    agreement: Agreement | None = None
    """With an LLM judge: the heuristic judge's scores of the same summary beside it."""

    def criterion(self, name: str) -> CriterionScore:
        """Return the criterion called `name`.

        Raises:
            KeyError: no criterion has that name.
        """
        for item in self.criteria:
            if item.name == name:
                return item
        raise KeyError(name)


class RunScore(BaseModel):
    """One criterion's result in a single run (before runs are combined)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    score: float
    reason: str
    error: str | None = None


def combine(name: str, runs: Sequence[RunScore]) -> CriterionScore:
    """Return a criterion's mean and spread over its runs (failed only when every run failed).

    The reason is the last successful run's (the runs judge the same case; when they disagree
    the spread says so). A criterion that failed in some runs only is scored over the others,
    its reason naming the failures; one that failed in every run has `error` set and score 0.
    """
    good = [run for run in runs if run.error is None]
    failed = [run for run in runs if run.error is not None]
    if not good:
        return CriterionScore(
            name=name,
            score=0.0,
            reason=failed[-1].reason if failed else "",
            scores=[0.0 for _ in runs],
            spread=0.0,
            error=failed[-1].error if failed else "not judged",
        )
    scores = [round(run.score, 4) for run in good]
    reason = good[-1].reason
    if failed:
        reason += f" ({len(failed)} of {len(runs)} runs failed: {failed[-1].error})"
    return CriterionScore(
        name=name,
        score=round(fmean(scores), 4),
        reason=reason,
        scores=scores,
        spread=round(pstdev(scores), 4) if len(scores) > 1 else 0.0,
    )


def overall(criteria: Sequence[CriterionScore]) -> float:
    """Return the weighted mean score (`WEIGHTS`) of the criteria without an error (0.0 when
    none)."""
    judged = [item for item in criteria if item.error is None]
    if not judged:
        return 0.0
    weights = [WEIGHTS.get(item.name, 1.0) for item in judged]
    return round(fmean([item.score for item in judged], weights=weights), 4)


def agreement_of(llm: Sequence[CriterionScore], heuristic: Sequence[RunScore]) -> Agreement:
    """Return how the heuristic scores compare with the LLM judge's, criterion by criterion."""
    offline = {score.name: score for score in heuristic if score.error is None}
    both = [c for c in llm if c.error is None and c.name in offline]
    gaps = [abs(c.score - offline[c.name].score) for c in both]
    return Agreement(
        criteria=[c.name for c in both],
        llm=[c.score for c in both],
        heuristic=[round(offline[c.name].score, 4) for c in both],
        mean_gap=round(fmean(gaps), 4) if gaps else 1.0,
    )
