"""The LLM judge: deepeval GEval per criterion and SummarizationMetric, through a Completer.

Each criterion is a GEval metric with explicit evaluation steps (prompt files
`judge_<criterion>.md`): the conciseness steps carry the compression ratio, the
instructions metric gets the prompt as the test case's context. SummarizationMetric adds
the "summarization" criterion. Every run makes fresh metric instances (SummarizationMetric
caches its assessment questions on the instance, so a reused one would judge a second case
with the first case's questions). A criterion whose model reply is not valid JSON gets an
`error`; the others are kept. deepeval is imported only here, and only when called.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memory import prompts
from memory.errors import InvalidModelOutput
from memory.judge.deepeval_model import judge_model, quiet_deepeval
from memory.judge.records import CRITERIA, SUMMARIZATION, Evaluation, RunScore, combine, overall

if TYPE_CHECKING:
    from memory.ports import Completer

NO_PROMPT = "no prompt given: the prompt's instructions were not judged (give the prompt)"
ASSESSMENT_QUESTIONS = 5
"""Questions SummarizationMetric asks of the source to measure coverage."""


def steps(criterion: str, *, compression_ratio: float) -> list[str]:
    """Return the GEval evaluation steps of `criterion`, one per line of its prompt file."""
    values: dict[str, str | int] = {}
    if criterion == "conciseness":
        values = {"ratio": f"{compression_ratio:.2f}", "ratio_percent": f"{compression_ratio:.0%}"}
    text = prompts.render(f"judge_{criterion}", **values)
    return [line.strip() for line in text.splitlines() if line.strip()]


def judge_with_llm(
    source: Sequence[str],
    summary: str,
    *,
    prompt: str | None,
    judge: Completer,
    runs: int,
    compression_ratio: float,
) -> Evaluation:
    """Return the evaluation of `summary` by deepeval metrics on `judge`, judged `runs` times.

    Raises:
        ProviderError: the model could not be reached or refused every request format
            (invalid JSON fails only the criterion that asked for it).
    """
    model = judge_model(judge)
    names = [*CRITERIA, SUMMARIZATION]
    per_run: dict[str, list[RunScore]] = {name: [] for name in names}
    for _ in range(runs):
        for score in _one_run(model, source, summary, prompt, compression_ratio):
            per_run[score.name].append(score)
    criteria = [combine(name, per_run[name]) for name in names]
    return Evaluation(
        criteria=criteria,
        overall=overall(criteria),
        judge=f"{judge.model} (deepeval)",
        offline=False,
        runs=runs,
        cost_tokens=model.usage.tokens,
        compression_ratio=compression_ratio,
        flags=[],
    )


def _one_run(
    judge: Any, source: Sequence[str], summary: str, prompt: str | None, ratio: float
) -> list[RunScore]:
    """Return one run's scores, from metric instances made for this run only."""
    quiet_deepeval()
    from deepeval.test_case import LLMTestCase

    case = LLMTestCase(
        input="\n".join(source),
        actual_output=summary,
        context=[prompt] if prompt and prompt.strip() else None,
    )
    scores: list[RunScore] = []
    for name in CRITERIA:
        if name == "instructions" and case.context is None:
            scores.append(RunScore(name=name, score=0.0, reason="", error=NO_PROMPT))
            continue
        scores.append(_measured(name, _geval(judge, name, ratio), case))
    scores.append(_measured(SUMMARIZATION, _summarization(judge), case))
    return scores


def _geval(judge: Any, name: str, ratio: float) -> Any:
    from deepeval.metrics import GEval
    from deepeval.test_case import SingleTurnParams

    params = [SingleTurnParams.INPUT, SingleTurnParams.ACTUAL_OUTPUT]
    if name == "instructions":
        params.append(SingleTurnParams.CONTEXT)
    return GEval(
        name=name,
        evaluation_params=params,
        evaluation_steps=steps(name, compression_ratio=ratio),
        model=judge,
        async_mode=False,
    )


def _summarization(judge: Any) -> Any:
    from deepeval.metrics import SummarizationMetric

    return SummarizationMetric(model=judge, n=ASSESSMENT_QUESTIONS, async_mode=False)


def _measured(name: str, metric: Any, case: Any) -> RunScore:
    """Return the metric's score and reason on `case`, or its error if the reply was unusable."""
    try:
        metric.measure(case, _show_indicator=False)
    except InvalidModelOutput as exc:
        return RunScore(name=name, score=0.0, reason="", error=str(exc))
    except (ValueError, KeyError, TypeError) as exc:  # deepeval's checks of the parsed reply
        return RunScore(name=name, score=0.0, reason="", error=f"judge model reply unusable: {exc}")
    score = min(max(float(metric.score), 0.0), 1.0)
    return RunScore(name=name, score=score, reason=str(metric.reason or ""))
