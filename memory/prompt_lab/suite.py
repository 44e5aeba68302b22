"""Compaction suites: one or more prompts over many entry sets, for several rounds each.

A suite takes N cases from one source: N keys of a bank (largest first, read only), the keys
of pasted entries (a frozen golden set is a paste saved as JSON lines: `--save-set`), or N
synthetic sets (seeds `seed` .. `seed + N - 1`). Each case's entries are cut into R rounds
in order; each round summarizes the previous round's summary plus its entries within the
compression target (default 25% of the case's tokens so far), as repeated compaction does
(the summary is carried into the next round). Per round: how many of the facts seen so far
survive in the summary (planted facts for synthetic sets, else the names and numbers of the
entries). The last summary is judged against every entry; a case passes when each
criterion with a threshold scores at least it. Each case and the whole set have a
fingerprint (a hash of their entries), so scores are only compared on the same entries.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import replace
from statistics import fmean
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, model_validator

from memory import banks
from memory.compaction.plan import MIN_SUMMARY_TOKENS, SUMMARY_SLACK
from memory.compaction.summarizer import check_summary
from memory.config import get_mode
from memory.errors import InvalidInput
from memory.judge import CRITERIA, evaluate
from memory.judge import text as t
from memory.models import Entry
from memory.prompt_lab.pasted import draft_bank, parse_pasted
from memory.prompt_lab.records import BankSource, DraftEntry, PastedSource, Source
from memory.prompt_lab.sources import Loaded, _from_drafts, as_draft, load
from memory.prompts import compaction_messages, entry_line
from memory.providers.tokens import count_tokens
from memory.validation import check_text

if TYPE_CHECKING:
    from memory.context import Context
    from memory.prompt_lab.run import LabModels

MAX_CASES = 200
MAX_ROUNDS = 10


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SuiteRequest(_Record):
    """A suite: its source, prompts, cases, rounds, compression target and thresholds;
    checked when made (InvalidInput)."""

    source: Source
    prompts: list[str]
    cases: int = 10
    rounds: int = 3
    target: float = 0.25
    """Summary budget as a share of the case's tokens so far."""
    thresholds: dict[str, float] = {}
    """criterion -> the least score a case needs to pass it."""
    min_pass_rate: float = 1.0
    """The share of cases that must pass every threshold for the suite to pass."""

    @model_validator(mode="after")
    def _checked(self) -> SuiteRequest:
        if not self.prompts or any(not p.strip() for p in self.prompts):
            raise InvalidInput("a suite needs at least one non-blank prompt")
        for prompt in self.prompts:
            check_text("compaction prompt", prompt)
        if not 1 <= self.cases <= MAX_CASES:
            raise InvalidInput(f"cases must be 1-{MAX_CASES}, got {self.cases}")
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise InvalidInput(f"rounds must be 1-{MAX_ROUNDS}, got {self.rounds}")
        if not 0 < self.target <= 1:
            raise InvalidInput(
                f"the target must be a share of the source in (0, 1], got {self.target}"
            )
        for name, value in self.thresholds.items():
            if name not in CRITERIA:
                raise InvalidInput(f"unknown criterion {name!r}; known: {', '.join(CRITERIA)}")
            if not 0 <= value <= 1:
                raise InvalidInput(f"threshold {name}={value} is not in 0-1")
        if not 0 <= self.min_pass_rate <= 1:
            raise InvalidInput(f"the pass rate must be in 0-1, got {self.min_pass_rate}")
        return self


class CaseResult(_Record):
    """One prompt on one case: fact survival per round, final scores, pass, cost."""

    case: str
    prompt: str
    fingerprint: str
    entries: int
    survival: list[float]
    """Share of the facts seen so far that the summary holds, after each round."""
    scores: dict[str, float | None]
    """Per criterion (None: the judge could not score it, e.g. no checkable instruction)."""
    passed: dict[str, bool]
    ok: bool
    tokens_in: int
    tokens_out: int
    seconds: float
    summary: str
    warnings: list[str]


class PromptResult(_Record):
    """One prompt over every case of the suite."""

    prompt: str
    pass_rate: float
    criterion_pass: dict[str, float]
    """Per thresholded criterion, the share of cases at or over its threshold."""
    mean_scores: dict[str, float]
    survival: list[float]
    """Mean fact survival per round over the cases."""
    tokens_in: int
    tokens_out: int
    seconds: float
    passed: bool


class SuiteResult(_Record):
    """A suite's outcome: per prompt and per case, with the entry set's fingerprint."""

    fingerprint: str
    source_label: str
    rounds: int
    target: float
    thresholds: dict[str, float]
    min_pass_rate: float
    prompts: list[PromptResult]
    cases: list[CaseResult]
    passed: bool
    """Every prompt reached the pass rate."""
    warnings: list[str]


def fingerprint(drafts: Sequence[DraftEntry]) -> str:
    """Return a short hash of entries (key, speaker, content): same entries, same print."""
    rows = [[d.key, d.speaker, d.content] for d in drafts]
    return hashlib.sha256(json.dumps(rows).encode("utf-8")).hexdigest()[:12]


def run_suite(ctx: Context, request: SuiteRequest, models: LabModels) -> SuiteResult:
    """Run every prompt of the suite on every case (see the module docstring).

    Raises:
        InvalidInput: no case with two or more entries, or bad pasted text.
        NotFound: an unknown bank.
        ProviderError: the summarizer or the judge failed.
    """
    loaded = _cases(ctx, request, models)
    results: list[CaseResult] = []
    for prompt in request.prompts:
        results += [_one(ctx, request, models, case, prompt) for case in loaded]
    every = [as_draft(e) for case in loaded for e in case.entries]
    summaries = [
        _prompt_result(request, p, [r for r in results if r.prompt == p]) for p in request.prompts
    ]
    warnings = sorted({w for r in results for w in r.warnings})
    return SuiteResult(
        fingerprint=fingerprint(every),
        source_label=f"{len(loaded)} cases from {_origin(request.source, loaded)}",
        rounds=request.rounds,
        target=request.target,
        thresholds=request.thresholds,
        min_pass_rate=request.min_pass_rate,
        prompts=summaries,
        cases=results,
        passed=all(s.passed for s in summaries),
        warnings=warnings,
    )


def suite_set(ctx: Context, request: SuiteRequest, models: LabModels) -> list[DraftEntry]:
    """Return the suite's cases as one frozen set of entries, one key per case (paste it
    back, e.g. `--pasted FILE`, to run the same suite on exactly these entries)."""
    drafts: list[DraftEntry] = []
    for index, case in enumerate(_cases(ctx, request, models)):
        keys = {e.key for e in case.entries}
        rename = case.facts is not None or len(keys) != 1  # synthetic sets share one key
        for entry in case.entries:
            draft = as_draft(entry)
            drafts.append(draft.model_copy(update={"key": f"case-{index}"}) if rename else draft)
    return drafts


def _origin(source: Source, loaded: Sequence[Loaded]) -> str:
    if isinstance(source, BankSource):
        return f"bank {loaded[0].bank.name}"
    if isinstance(source, PastedSource):
        return "pasted entries"
    return f"synthetic sets (seeds {source.seed}-{source.seed + len(loaded) - 1})"


def _cases(ctx: Context, request: SuiteRequest, models: LabModels) -> list[Loaded]:
    source = request.source
    if isinstance(source, BankSource) and source.key is None:
        bank = banks.get(ctx, source.bank)
        sizes = [p for p in ctx.store.partition_sizes(bank.id) if p.entries >= 2]
        biggest = sorted(sizes, key=lambda p: (-p.entries, p.key))[: request.cases]
        if not biggest:
            raise InvalidInput(f"bank {bank.name!r} has no key with 2 or more entries to test")
        return [load(ctx, BankSource(bank=bank.id, key=p.key), bank) for p in biggest]
    if isinstance(source, PastedSource):
        drafts = parse_pasted(source.text, source.bank_type)
        keys = list(dict.fromkeys(d.key for d in drafts))
        cases: list[Loaded] = []
        for key in keys:
            group = [d for d in drafts if d.key == key]
            if len(group) >= 2 and len(cases) < request.cases:
                bank = draft_bank(source.bank_type)
                cases.append(_from_drafts(ctx, group, bank, None, f"pasted key {key}"))
        if not cases:
            raise InvalidInput("the pasted entries have no key with 2 or more entries to test")
        return cases
    if isinstance(source, BankSource):
        return [load(ctx, source)]
    seeds = range(source.seed, source.seed + request.cases)
    return [
        replace(
            load(ctx, source.model_copy(update={"seed": s}), None, models.generator),
            label=f"seed {s}",
        )
        for s in seeds
    ]


def _one(
    ctx: Context, request: SuiteRequest, models: LabModels, case: Loaded, prompt: str
) -> CaseResult:
    started = time.perf_counter()
    entries = case.entries
    rounds = min(request.rounds, len(entries))
    size = -(-len(entries) // rounds)
    chunks = [entries[i : i + size] for i in range(0, len(entries), size)]
    summary, seen, survival, warnings = "", [], [], []
    tokens_in = tokens_out = 0
    for chunk in chunks:
        seen += chunk
        lines = [entry_line(e.content, e.speaker) for e in chunk]
        source_tokens = sum(e.token_count for e in seen)
        budget = max(MIN_SUMMARY_TOKENS, int(source_tokens * request.target))
        if budget >= source_tokens:
            warnings.append(
                f"the budget ({budget} tokens) is at least the source ({source_tokens}): "
                "the summary need not compress anything"
            )
        messages = compaction_messages(prompt, summary, lines, budget)
        tokens_in += sum(count_tokens(m.content) for m in messages)
        summary = check_summary(models.summarizer.complete(messages), budget, slack=SUMMARY_SLACK)
        tokens_out += count_tokens(summary)
        survival.append(round(_survival(case, seen, summary), 4))
    every = [entry_line(e.content, e.speaker) for e in entries]
    mode = get_mode(case.bank.mode, bank=case.bank.name)
    evaluation = evaluate(
        every, summary, prompt=prompt, judge=models.judge, embedder=ctx.embedder(mode)
    )
    scores = {c.name: (None if c.error else c.score) for c in evaluation.criteria}
    passed = {
        name: scores.get(name) is not None and (scores[name] or 0.0) >= value
        for name, value in request.thresholds.items()
    }
    name = case.entries[0].key if case.facts is None else case.label
    return CaseResult(
        case=name,
        prompt=prompt,
        fingerprint=fingerprint([as_draft(e) for e in entries]),
        entries=len(entries),
        survival=survival,
        scores=scores,
        passed=passed,
        ok=all(passed.values()),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        seconds=round(time.perf_counter() - started, 3),
        summary=summary,
        warnings=list(dict.fromkeys(warnings)),
    )


def _survival(case: Loaded, seen: Sequence[Entry], summary: str) -> float:
    """Return the share of the facts in `seen` that `summary` holds (planted facts when the
    case has them, else the entries' numbers and names)."""
    text = "\n".join(e.content for e in seen)
    if case.facts is not None:
        facts = [f.value.lower() for f in case.facts if f.value.lower() in text.lower()]
        return sum(f in summary.lower() for f in facts) / len(facts) if facts else 1.0
    speakers = sorted({e.speaker for e in seen if e.speaker})
    wanted = set().union(*(t.numbers(e.content) | t.names(e.content, speakers) for e in seen))
    if not wanted:
        return 1.0
    have = t.numbers(summary) | t.vocabulary([summary])
    return len(wanted & have) / len(wanted)


def _prompt_result(request: SuiteRequest, prompt: str, rows: list[CaseResult]) -> PromptResult:
    rounds = max(len(r.survival) for r in rows)
    curve = [
        round(fmean([r.survival[i] for r in rows if len(r.survival) > i]), 4) for i in range(rounds)
    ]
    means = {}
    for name in CRITERIA:
        values = [r.scores[name] for r in rows if r.scores.get(name) is not None]
        if values:
            means[name] = round(fmean([v for v in values if v is not None]), 4)
    rate = sum(r.ok for r in rows) / len(rows)
    return PromptResult(
        prompt=prompt,
        pass_rate=round(rate, 4),
        criterion_pass={
            name: round(sum(r.passed[name] for r in rows) / len(rows), 4)
            for name in request.thresholds
        },
        mean_scores=means,
        survival=curve,
        tokens_in=sum(r.tokens_in for r in rows),
        tokens_out=sum(r.tokens_out for r in rows),
        seconds=round(sum(r.seconds for r in rows), 3),
        passed=rate >= request.min_pass_rate,
    )
