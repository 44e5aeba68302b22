"""The recall probe: questions about the planted facts, answered offline by retrieval from the
compacted text (summary and surviving entries) and from the full history, side by side.

Each planted fact asks "what is the <subject>?". Retrieval is lexical, with no model: the
sentence sharing most word stems with the question (normalised by the sentence's length) is
the answer, and it is right when it holds the fact's value (as the fact diff compares values).
The ratio of the two recalls says how much of what the history answers the summary still does.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.judge import text as t
from memory.prompt_lab.facts import has_value, sentences_of
from memory.prompt_lab.records import PlantedFact, ProbeAnswer, RecallProbe


def _stems(text: str) -> set[str]:
    """Return the stems of the text's content words, as the judge stems them ("refunded",
    "refunds" -> "refund"; "shipping", "shipped" -> "shipp")."""
    return {t.stem(word) for word in t.content_words(text)}


def best_sentence(question: str, sentences: Sequence[str]) -> str | None:
    """Return the sentence sharing most word stems with `question`, the later at a tie
    (None: none shares a word)."""
    asked = _stems(question)
    best, top = None, 0
    for sentence in sentences:
        shared = len(asked & _stems(sentence))
        if shared and shared >= top:  # a tie goes to the later sentence (the newer)
            best, top = sentence, shared
    return best


def recall_probe(
    facts: Sequence[PlantedFact], compacted: str, history: Sequence[str]
) -> RecallProbe:
    """Return the probe of `facts`: answered from `compacted` text vs from `history` entries."""
    summary_sentences = sentences_of(compacted)
    history_sentences = [s for entry in history for s in sentences_of(entry)]
    answers = []
    for fact in facts:
        question = f"What is the {fact.text}?"
        from_summary = best_sentence(question, summary_sentences)
        from_history = best_sentence(question, history_sentences)
        answers.append(
            ProbeAnswer(
                question=question,
                value=fact.value,
                summary_answer=from_summary,
                from_summary=from_summary is not None and has_value(fact, from_summary),
                from_history=from_history is not None and has_value(fact, from_history),
            )
        )
    return RecallProbe(answers=answers)
