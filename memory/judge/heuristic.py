"""The offline heuristic judge: embedding coverage and support, kept and invented facts.

No language model: the source and the summary are cut into sentences and embedded with the
embedder passed in. Fact coverage is how much of the source (weighted by how much each
sentence says) some summary sentence is close to, plus the share of its names, numbers and
dates the summary keeps. Faithfulness is how closely each summary sentence matches some
source sentence, less a penalty for every number, name or date the source does not hold
(invented) or holds only away from the entries the sentence matches (misplaced).
Conciseness weighs the compression ratio, the share of content words and repeated
sentences. The prompt's instructions are checked by `memory.judge.instructions`.
Deterministic: the same case always gets the same scores.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memory.judge import text as t
from memory.judge.instructions import check_instructions
from memory.judge.records import CRITERIA, RunScore
from memory.ports import Embedder, Vectors

MIN_ATTRIBUTED = 3
"""Content words a summary sentence needs before its speaker is checked ("Great idea!" is
said by everyone)."""


@dataclass(frozen=True)
class HeuristicTuning:
    """Similarity and penalty settings of the heuristic judge."""

    low: float = 0.4
    """Cosine similarity at or under which a sentence counts as not matched at all."""
    high: float = 0.8
    """Cosine similarity at or over which a sentence counts as fully matched."""
    match_window: int = 3
    """How many best-matching source sentences a summary sentence's facts are looked up in."""
    placed_similarity: float = 0.8
    """Source sentences at least this close to a summary sentence also count as where it
    matches (besides the `match_window` best), when its facts are looked up."""
    attribution_margin: float = 0.1
    """How much closer another speaker's sentence must be for a sentence to be misattributed."""
    invented_penalty: float = 0.1
    """Faithfulness lost per invented number, name or date (the source does not hold it)."""
    misplaced_penalty: float = 0.05
    """Faithfulness lost per fact the source holds only away from where the sentence matches."""
    repeat_similarity: float = 0.92
    """Similarity at which a summary sentence repeats an earlier one."""
    lexical_low: float = 0.4
    """Share of a sentence's content words found in the text it is checked against at or
    under which the words give it no support (a merged or reworded sentence is matched by
    its words when one embedding match is not close: "Ben signed the contract for 12000
    euros, the first half due May 2" draws on two turns)."""
    lexical_high: float = 0.8
    """Share of its content words at or over which a sentence is fully supported by words."""
    lexical_window: int = 5
    """How many best-matching source lines a summary sentence's words are looked up in."""
    unsupported_penalty: float = 0.1
    """Faithfulness lost per summary sentence no source text supports (a claim with no
    name or number the source lacks is caught by this one)."""
    unsupported_words: int = 3
    """Content words a sentence needs before it can be flagged unsupported."""


@dataclass(frozen=True)
class _Sentence:
    line: int
    speaker: str | None
    text: str


@dataclass(frozen=True)
class _Case:
    source: list[_Sentence]
    """Source sentences that say something (at least one content word)."""
    lines: list[t.Line]
    summary: list[_Sentence]
    similarity: Vectors
    """Cosine similarity, summary sentences x source sentences."""
    summary_vectors: Vectors
    known: set[str]
    """Speakers and names of the source, lowercased."""
    vocabulary: set[str]
    source_numbers: set[str]
    source_dates: set[str]
    verbatim: set[str]
    """Every source sentence as `_plain` text (a summary sentence copied from the source is
    supported, whatever it says)."""
    line_facts: list[set[str]]
    """Per source line: its numbers and words (what `_fact_stems` matches), computed once."""
    line_stems: list[set[str]]
    """Per source line: the stems of its text and speaker, computed once."""


@dataclass(frozen=True)
class HeuristicResult:
    """One heuristic run: a score per criterion, and the flags raised."""

    scores: list[RunScore]
    flags: list[str]


def judge_heuristic(
    source: Sequence[str],
    summary: str,
    *,
    prompt: str | None,
    embedder: Embedder,
    compression_ratio: float,
    tuning: HeuristicTuning | None = None,
) -> HeuristicResult:
    """Return the heuristic judge's scores of `summary` against the `source` lines."""
    tune = tuning or HeuristicTuning()
    case = _case(source, summary, embedder)
    faithful, flags = _faithfulness(case, tune)
    scores = {
        "fact_coverage": _coverage(case, tune),
        "faithfulness": faithful,
        "conciseness": _conciseness(case, summary, compression_ratio, tune),
        "instructions": check_instructions(prompt, source, summary),
    }
    return HeuristicResult(scores=[scores[name] for name in CRITERIA], flags=flags)


def _case(source: Sequence[str], summary: str, embedder: Embedder) -> _Case:
    lines = [t.split_speaker(row) for row in source if row.strip()]
    speakers = {line.speaker.lower() for line in lines if line.speaker}
    known = set(speakers)
    for line in lines:
        known |= t.names(line.text, speakers)
    every = [
        _Sentence(index, line.speaker, sentence)
        for index, line in enumerate(lines)
        for sentence in t.sentences(line.text)
        if t.words(sentence)
    ]
    sentences = [s for s in every if t.content_words(s.text)] or every  # "ok", "ok", ...
    units = _summary_sentences(summary, speakers)
    vectors = _embed(embedder, [s.text for s in sentences] + [u.text for u in units])
    src, summ = vectors[: len(sentences)], vectors[len(sentences) :]
    similarity = summ @ src.T if len(sentences) and len(units) else np.zeros((len(units), 0))
    texts = [line.text for line in lines] + [line.speaker or "" for line in lines]
    return _Case(
        source=sentences,
        lines=lines,
        summary=units,
        similarity=np.asarray(similarity, dtype=np.float32),
        summary_vectors=summ,
        known=known,
        vocabulary=t.vocabulary(texts),
        source_numbers=set().union(*(t.numbers(line.text) for line in lines)),
        source_dates=set().union(*(t.dates(line.text) for line in lines)),
        verbatim={_plain(s.text) for s in every},
        line_facts=[
            t.numbers(line.text) | t.vocabulary([line.text, line.speaker or ""]) for line in lines
        ],
        line_stems=[t.stems([line.text, line.speaker or ""]) for line in lines],
    )


def _plain(text: str) -> str:
    """Return text as its lowercased words (punctuation and spacing do not matter)."""
    return " ".join(t.words(text))


def _summary_sentences(summary: str, speakers: set[str]) -> list[_Sentence]:
    """Return the summary's sentences; a "speaker: ..." prefix counts only for a source speaker."""
    found: list[_Sentence] = []
    for index, row in enumerate(t.summary_lines(summary)):
        line = t.split_speaker(row)
        if line.speaker is not None and line.speaker.lower() not in speakers:
            line = t.Line(None, row.strip())
        found.extend(_Sentence(index, line.speaker, s) for s in t.sentences(line.text))
    return found


def _embed(embedder: Embedder, texts: list[str]) -> Vectors:
    if not texts:
        return np.zeros((0, embedder.dims), dtype=np.float32)
    return np.asarray(embedder.embed(texts), dtype=np.float32)


def _soft(values: Vectors, tune: HeuristicTuning) -> Vectors:
    """Map similarities to 0-1: 0 at or under `low`, 1 at or over `high`, linear between."""
    scaled: Vectors = np.clip((values - tune.low) / (tune.high - tune.low), 0.0, 1.0)
    return scaled


FACTLESS_WEIGHT = 0.35
"""Weight of a content word in a source sentence with no name, number or date, relative to
one in a sentence with facts: what compaction must keep is mostly facts, and the filler of
a long chat ("Let me look into that for you.") should not outweigh them."""


def _weight(sentence: str, known: set[str]) -> float:
    """Return how much a source sentence says: its distinct content words and facts."""
    facts = len(t.numbers(sentence)) + len(t.names(sentence, known)) + len(t.dates(sentence))
    words = min(len(set(t.content_words(sentence))), 12)
    return max(words, 1) * (1.0 if facts else FACTLESS_WEIGHT) + 2.0 * facts


def _key_facts(texts: Sequence[str], known: set[str]) -> set[str]:
    found: set[str] = set()
    for text in texts:
        found |= t.numbers(text) | t.names(text, known) | t.dates(text)
    return found


def _coverage(case: _Case, tune: HeuristicTuning) -> RunScore:
    if not case.source:
        return RunScore(name="fact_coverage", score=0.0, reason="", error="the source says nothing")
    weights = np.array([_weight(s.text, case.known) for s in case.source], dtype=np.float32)
    if case.summary:
        best = _soft(case.similarity.max(axis=0), tune)
        stems = t.stems([s.text for s in case.summary] + [s.speaker or "" for s in case.summary])
        lexical = np.array([_lexical(s.text, stems, tune) for s in case.source])
        best = np.maximum(best, lexical.astype(np.float32))
    else:
        best = np.zeros(len(case.source), dtype=np.float32)
    semantic = float((weights * best).sum() / weights.sum())
    covered = int((best >= 0.5).sum())
    facts = _key_facts([line.text for line in case.lines], case.known)
    summary_text = [s.text for s in case.summary] + [s.speaker or "" for s in case.summary]
    kept = facts & (_key_facts(summary_text, case.known) | t.vocabulary(summary_text))
    reason = (
        f"{covered} of {len(case.source)} source sentences have a close summary sentence "
        f"(embedding similarity; weighted by what each says: {semantic:.0%})"
    )
    if not facts:
        return RunScore(
            name="fact_coverage",
            score=semantic,
            reason=reason + "; no names, numbers or dates in the source",
        )
    share = len(kept) / len(facts)
    missing = sorted(facts - kept)
    reason += f"; {len(kept)} of {len(facts)} names, numbers and dates kept"
    if missing:
        reason += f" (missing: {', '.join(missing[:8])}{', ...' if len(missing) > 8 else ''})"
    return RunScore(name="fact_coverage", score=0.5 * semantic + 0.5 * share, reason=reason)


def _faithfulness(case: _Case, tune: HeuristicTuning) -> tuple[RunScore, list[str]]:
    if not case.summary:
        return RunScore(name="faithfulness", score=0.0, reason="the summary says nothing"), []
    flags: list[str] = []
    total = 0.0
    weighted = 0.0
    supported = 0
    unsupported = 0
    for row, unit in enumerate(case.summary):
        sims = case.similarity[row]
        support = float(_soft(sims.max(keepdims=True), tune)[0]) if sims.size else 0.0
        near = _near_stems(case, sims, tune) | _fact_stems(case, unit.text)
        support = max(support, _lexical(unit.text, near, tune))
        if _plain(unit.text) in case.verbatim:  # copied: "ok", "Backup done." x 12
            support = 1.0
        supported += support >= 0.5
        invented, misplaced = _unsupported_facts(case, unit, sims, tune)
        flags += invented + misplaced
        if support < 0.5 and len(set(t.content_words(unit.text))) >= tune.unsupported_words:
            unsupported += 1
            flags.append(f"unsupported: no source text says {unit.text[:60]!r}")
        size = max(len(t.words(unit.text)), 1)
        total += size
        weighted += size * support
    flags = list(dict.fromkeys(flags))
    invented = [flag for flag in flags if flag.startswith("invented")]
    misplaced = [flag for flag in flags if flag.startswith(("misplaced", "misattributed"))]
    penalty = tune.invented_penalty * len(invented) + tune.misplaced_penalty * len(misplaced)
    penalty += tune.unsupported_penalty * unsupported
    score = weighted / total * max(0.0, 1.0 - penalty)
    reason = (
        f"{supported} of {len(case.summary)} summary sentences match a source sentence "
        "(embedding similarity)"
    )
    reason += (
        f"; {len(invented)} invented names, numbers or dates (-{tune.invented_penalty:.2f} each)"
        if invented
        else "; no invented names, numbers or dates"
    )
    if misplaced:
        reason += (
            f"; {len(misplaced)} facts not found where the sentence matches the source "
            f"(-{tune.misplaced_penalty:.2f} each)"
        )
    if unsupported:
        reason += (
            f"; {unsupported} sentences no source text supports "
            f"(-{tune.unsupported_penalty:.2f} each)"
        )
    return RunScore(name="faithfulness", score=score, reason=reason), flags


def _lexical(text: str, stems: set[str], tune: HeuristicTuning) -> float:
    """Return the support the words of `text` get from `stems` (0-1, see `lexical_low`)."""
    words = {t.stem(word) for word in t.content_words(text)}
    if not words:
        return 0.0
    share = len(words & stems) / len(words)
    return float(np.clip((share - tune.lexical_low) / (tune.lexical_high - tune.lexical_low), 0, 1))


def _near_stems(case: _Case, sims: Vectors, tune: HeuristicTuning) -> set[str]:
    """Return the word stems of the source lines a summary sentence matches best."""
    if not sims.size:
        return set()
    nearest = np.argsort(-sims, kind="stable")[: tune.lexical_window]
    lines = dict.fromkeys(case.source[int(j)].line for j in nearest)
    return set().union(*(case.line_stems[i] for i in lines))


def _fact_stems(case: _Case, text: str) -> set[str]:
    """Return the word stems of the source lines holding one of the numbers or names of
    `text` (where a sentence merging several turns draws its words from)."""
    facts = t.numbers(text) | t.names(text, case.known)
    if not facts:
        return set()
    held = (
        stems
        for found, stems in zip(case.line_facts, case.line_stems, strict=True)
        if facts & found
    )
    return set().union(*held)


def _unsupported_facts(
    case: _Case, unit: _Sentence, sims: Vectors, tune: HeuristicTuning
) -> tuple[list[str], list[str]]:
    """Return flags for the unit's facts missing from the source, and for those the source
    holds only away from the sentences the unit matches best."""
    nearest = list(np.argsort(-sims, kind="stable")[: tune.match_window]) if sims.size else []
    close = np.flatnonzero(sims >= tune.placed_similarity)
    matched = [case.source[int(j)] for j in dict.fromkeys([*nearest, *close])]
    near_text = [case.lines[s.line].text for s in matched]
    near_vocab = t.vocabulary(near_text + [s.speaker or "" for s in matched])
    near_numbers = set().union(*(t.numbers(text) for text in near_text))
    invented: list[str] = []
    misplaced: list[str] = []
    for number in sorted(t.numbers(unit.text)):
        if number not in case.source_numbers:
            invented.append(f"invented number: {number}")
        elif number not in near_numbers and not _placed(case, unit.text, number, "number"):
            misplaced.append(
                f"misplaced number: {number} (in the source, not where this sentence matches it)"
            )
    for name in sorted(t.names(unit.text, case.known, openers=True)):
        if name not in case.vocabulary:
            invented.append(f"invented name: {name.capitalize()}")
        elif (
            name in case.known
            and name not in near_vocab
            and not _placed(case, unit.text, name, "name")
        ):
            misplaced.append(
                f"misplaced name: {name.capitalize()} (in the source, not where "
                "this sentence matches it)"
            )
    for day in sorted(t.dates(unit.text)):
        if day not in case.source_dates:
            invented.append(f"invented date: {day.capitalize()}")
        elif day not in near_vocab and not _placed(case, unit.text, day, "date"):
            misplaced.append(
                f"misplaced date: {day.capitalize()} (in the source, not where "
                "this sentence matches it)"
            )
    if _misattributed(case, unit, sims, tune):
        misplaced.append(f"misattributed: {unit.speaker} did not say {unit.text[:40]!r}")
    return invented, misplaced


_CLAUSE = re.compile(r"[,;:()]|\s(?:and|but|with|while|so|then)\s", re.IGNORECASE)


def _placed(case: _Case, text: str, fact: str, kind: str) -> bool:
    """Return whether a fact the best-matching source sentences lack is still where the
    summary puts it: a sentence that merges facts from several turns ("Dana's order 48213
    from March 3 was refunded 389 euros") matches one turn best, so each fact is looked up
    with its own clause: placed when a source line that holds it shares a content word with
    that clause, or when the clause says nothing else about it."""
    clause = next((c for c in _CLAUSE.split(text) if fact in _facts_in(c, kind)), text)
    own = {t.stem(word) for word in t.content_words(clause)} - {t.stem(fact)}
    own -= {t.stem(word) for word in t.words(fact)}
    if not own:
        return True
    return any(
        fact in _facts_in(line.text, kind) and own & t.stems([line.text]) for line in case.lines
    )


def _facts_in(text: str, kind: str) -> set[str]:
    if kind == "number":
        return t.numbers(text)
    if kind == "date":
        return t.dates(text)
    return t.vocabulary([text])


def _misattributed(case: _Case, unit: _Sentence, sims: Vectors, tune: HeuristicTuning) -> bool:
    """Return whether the unit's speaker is wrong: its closest source sentence (a close
    match, halfway from `low` to `high` or closer) is another speaker's, clearly closer than
    any of this speaker's sentences."""
    if not unit.speaker or not sims.size or len(t.content_words(unit.text)) < MIN_ATTRIBUTED:
        return False
    best = int(np.argmax(sims))
    if sims[best] < (tune.low + tune.high) / 2 or case.source[best].speaker == unit.speaker:
        return False
    own = [float(sims[j]) for j, s in enumerate(case.source) if s.speaker == unit.speaker]
    return max(own, default=0.0) < float(sims[best]) - tune.attribution_margin


def _conciseness(case: _Case, summary: str, ratio: float, tune: HeuristicTuning) -> RunScore:
    words = t.words(" ".join(t.summary_lines(summary)))
    if not words:
        return RunScore(name="conciseness", score=0.0, reason="the summary says nothing")
    short = float(np.clip((1.0 - ratio) / 0.7, 0.0, 1.0))
    density = len([w for w in words if w not in t.STOPWORDS]) / len(words)
    dense = min(density / 0.55, 1.0)
    repeats = _repeats(case, tune)
    share = repeats / max(len(case.summary), 1)
    score = 0.4 * short + 0.4 * dense + 0.2 * (1.0 - share)
    reason = (
        f"summary is {ratio:.0%} of the source's tokens (full marks at 30% or less); "
        f"{density:.0%} content words; {repeats} repeated sentences"
    )
    return RunScore(name="conciseness", score=score, reason=reason)


def _repeats(case: _Case, tune: HeuristicTuning) -> int:
    """Return how many summary sentences are near-repeats of an earlier one."""
    if len(case.summary) < 2:
        return 0
    close = case.summary_vectors @ case.summary_vectors.T
    rows = range(1, len(case.summary))
    return sum(bool((close[i, :i] >= tune.repeat_similarity).any()) for i in rows)
