"""The judge: a summary scored against its source, per criterion, by an LLM or offline.

`evaluate` returns one `Evaluation` from either judge: with a judge model (a `Completer`,
passed in: nothing here reads settings) deepeval's GEval per criterion and
SummarizationMetric; without one, the heuristic judge,
labelled HEURISTIC_LABEL wherever its scores are shown. deepeval and litellm are imported
only when a judge model is used.
"""

from __future__ import annotations

from memory.judge.judging import MAX_RUNS, check_runs, evaluate, judge_calls, uses_llm
from memory.judge.records import (
    CRITERIA,
    HEURISTIC_LABEL,
    OFFLINE_JUDGE,
    CriterionScore,
    Evaluation,
)

__all__ = [
    "CRITERIA",
    "HEURISTIC_LABEL",
    "MAX_RUNS",
    "OFFLINE_JUDGE",
    "CriterionScore",
    "Evaluation",
    "check_runs",
    "evaluate",
    "judge_calls",
    "uses_llm",
]
