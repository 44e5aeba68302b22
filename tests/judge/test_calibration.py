"""The heuristic judge is calibrated: a faithful summary scores near 1 and beats a half one and
one with invented claims by a clear margin; merged facts are no "misplaced" facts; a copied
summary of repetitive lines is faithful; a claim with no name or number is still caught."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memory.judge import evaluate
from memory.ports import Embedder
from memory.providers.embed import MINILM_NAME, embedder_for
from memory.testing import HashingEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from judge_cases import DELIVERY, MERGED, REPETITIVE, cases

MARGIN = 0.15


@pytest.fixture(scope="module", params=["hashing", "minilm"])
def embedder(request: pytest.FixtureRequest) -> Embedder:
    return HashingEmbedder(384) if request.param == "hashing" else embedder_for(MINILM_NAME, 384)


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.name)
def test_faithful_beats_half_and_invented_by_a_clear_margin(case, embedder: Embedder) -> None:  # type: ignore[no-untyped-def]
    faithful, half, invented = (
        evaluate(case.source, text, prompt=case.prompt, embedder=embedder)
        for text in (case.faithful, case.half, case.invented)
    )
    assert faithful.overall >= 0.9
    assert faithful.overall - half.overall >= MARGIN
    assert faithful.overall - invented.overall >= MARGIN
    assert not [f for f in faithful.flags if f.startswith(("mis", "unsupported"))]


@pytest.mark.parametrize("source,summary", MERGED)
def test_a_sentence_merging_several_turns_raises_no_misplaced_flag(
    source: list[str], summary: str, embedder: Embedder
) -> None:
    judged = evaluate(source, summary, prompt=None, embedder=embedder)
    assert not [f for f in judged.flags if "mis" in f]
    assert judged.criterion("faithfulness").score >= 0.9


def test_a_verbatim_summary_of_repetitive_lines_is_faithful(embedder: Embedder) -> None:
    judged = evaluate(REPETITIVE, "\n".join(REPETITIVE[:4]), prompt=None, embedder=embedder)
    assert judged.criterion("faithfulness").score == 1.0
    copied = evaluate(["bot: ok"] * 8, "bot: ok\nbot: ok", prompt=None, embedder=embedder)
    assert copied.criterion("faithfulness").score == 1.0


def test_an_invented_claim_without_names_or_numbers_is_caught(embedder: Embedder) -> None:
    claim = "The customer said she will never buy from this shop again and closes her account."
    judged = evaluate(
        DELIVERY.source, DELIVERY.faithful + " " + claim, prompt=None, embedder=embedder
    )
    assert any(f.startswith("unsupported") and "never buy" in f for f in judged.flags)
    plain = evaluate(DELIVERY.source, DELIVERY.faithful, prompt=None, embedder=embedder)
    assert judged.criterion("faithfulness").score < plain.criterion("faithfulness").score
