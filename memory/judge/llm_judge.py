"""The LLM judge: deepeval GEval per criterion and SummarizationMetric (being built)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memory.errors import ProviderError

if TYPE_CHECKING:
    from memory.judge.records import Evaluation
    from memory.settings import Settings


def judge_with_llm(
    source: Sequence[str],
    summary: str,
    *,
    prompt: str | None,
    model: str,
    runs: int,
    compression_ratio: float,
    settings: Settings | None,
) -> Evaluation:
    """Return the LLM judge's evaluation (not built yet: raises ProviderError)."""
    raise ProviderError(f"the LLM judge ({model}) is not available yet; use the heuristic judge")
