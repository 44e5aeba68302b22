"""Run a compaction test: the real plan and summarizer on in-memory entries, then the judge.

Nothing is written to any bank: the entries are read (or parsed, or generated) into memory,
`plan_partition` and `summarize` run on them as compaction would, and only the test run
itself is saved (`memory.store.lab_runs`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory.compaction.plan import (
    MIN_SUMMARY_TOKENS,
    SUMMARY_SHARE,
    SUMMARY_SLACK,
    TARGET_RATIO,
    PartitionRow,
    plan_partition,
    summary_budget,
)
from memory.compaction.summarizer import completer_for, summarize, summarizer_label
from memory.config import Mode, get_mode
from memory.errors import InvalidInput
from memory.judge import HEURISTIC_LABEL, OFFLINE_JUDGE, Evaluation, evaluate, judge_calls, uses_llm
from memory.models import Bank, Entry
from memory.ports import Completer
from memory.prompt_lab.facts import fact_diff
from memory.prompt_lab.probe import recall_probe
from memory.prompt_lab.records import CostPreview, SyntheticSource, TestOptions, TestRun
from memory.prompt_lab.sources import Loaded, as_draft, llm_for, load
from memory.prompt_lab.synthetic import check_source
from memory.prompts import entry_line
from memory.providers.extractive import Followed, following
from memory.providers.labels import is_offline

if TYPE_CHECKING:
    from memory.context import Context
    from memory.prompt_lab.records import Source

Progress = Callable[[str], None]
ESTIMATED_TOKENS_PER_ENTRY = 40
"""Tokens a synthetic entry is assumed to take when an LLM will write it (preview only)."""


@dataclass(frozen=True)
class LabModels:
    """The models a compaction test uses, chosen once where the test is asked for
    (`models_for`, from the context's settings); tests pass scripted ones."""

    summarizer: Completer
    """Writes the summary, as compaction's summarizer would."""
    judge: Completer | None = None
    """Scores the summary through deepeval; None: the offline heuristic judge."""
    generator: Completer | None = None
    """Writes synthetic entries; None: the offline templates."""


def models_for(ctx: Context, judge_model: str | None = None) -> LabModels:
    """Return the test's models: the context's summarizer, the judge `judge_model` names
    (None: the settings' MEMBANK_JUDGE_MODEL, the heuristic judge by default) and the
    settings' LLM as the synthetic generator (None when it is an offline one).

    Raises:
        InvalidInput: a blank judge name, an unknown offline judge, or a judge name litellm
            cannot route (before any work starts).
    """
    return LabModels(
        summarizer=completer_for(ctx),
        judge=judge_for(ctx, chosen_judge(ctx, judge_model)),
        generator=llm_for(ctx.settings),
    )


def preview(
    ctx: Context,
    source: Source,
    *,
    prompt: str,
    judge_model: str | None = None,
    runs: int = 1,
) -> CostPreview:
    """Return what a test of `source` will cost (`preview_checked` with these options)."""
    options = TestOptions(prompt=prompt, judge_model=judge_model, runs=runs)
    return preview_checked(ctx, source, options, models_for(ctx, options.judge_model))


def preview_checked(
    ctx: Context,
    source: Source,
    options: TestOptions,
    models: LabModels,
    bank: Bank | None = None,
) -> CostPreview:
    """Return what a test of `source` will cost: entries, tokens, judge calls; runs nothing.

    Synthetic entries an LLM would write are not generated: their count is the requested
    one and their tokens an estimate (ESTIMATED_TOKENS_PER_ENTRY each).

    Args:
        bank: the source's bank, already resolved (None: resolved here from the source).

    Raises:
        InvalidInput: a source with nothing to test.
        NotFound: an unknown bank.
    """
    judge_model = models.judge.model if models.judge is not None else None
    if isinstance(source, SyntheticSource) and models.generator is not None:
        check_source(source)
        count, tokens = source.count, source.count * ESTIMATED_TOKENS_PER_ENTRY
    else:
        loaded = load(ctx, source, bank, models.generator)
        count, tokens = len(loaded.entries), sum(e.token_count for e in loaded.entries)
    return CostPreview(
        entries=count,
        tokens=tokens,
        judge_calls=judge_calls(judge_model, options.runs),
        summarizer=summarizer_label(models.summarizer.model),
        judge=judge_label(judge_model),
    )


def chosen_judge(ctx: Context, judge_model: str | None) -> str:
    """Return the judge a test uses: the one given, else the settings' (MEMBANK_JUDGE_MODEL,
    the offline heuristic judge by default)."""
    return judge_model if judge_model is not None else ctx.settings.judge_model


def judge_label(judge_model: str | None) -> str:
    """Return how the judge's scores are labelled: the heuristic judge or the model."""
    return f"{judge_model} (deepeval)" if uses_llm(judge_model) else HEURISTIC_LABEL


def judge_for(ctx: Context, judge_model: str | None) -> Completer | None:
    """Return the judge model's completer (litellm, with the settings' timeout and retries);
    None for the offline heuristic judge.

    Raises:
        InvalidInput: a blank name, an unknown offline judge, or a name litellm cannot route
            to a provider (checked here, before any summary is written).
    """
    if not uses_llm(judge_model):
        return None
    assert judge_model is not None
    from memory.providers.llm import LiteLLMCompleter, provider_of

    try:
        provider_of(judge_model)
    except InvalidInput as exc:
        raise InvalidInput(
            f"judge: {exc}; or use {OFFLINE_JUDGE} (the offline heuristic judge)"
        ) from None
    config = ctx.settings
    return LiteLLMCompleter(judge_model, timeout=config.llm_timeout, retries=config.llm_retries)


def run_test(
    ctx: Context,
    source: Source,
    *,
    prompt: str,
    max_tokens: int | None = None,
    max_turns: int | None = None,
    judge_model: str | None = None,
    runs: int = 1,
    save: bool = True,
    progress: Progress | None = None,
) -> TestRun:
    """Run the compaction summarizer with `prompt` on `source`'s entries and judge it.

    Args:
        ctx: The context (store, embedder for the heuristic judge; its settings and
            summarizer choose the models: `models_for`).
        source: A bank (read only), pasted text, or a synthetic description.
        prompt, max_tokens, max_turns, judge_model, runs: the options (`TestOptions`).
        save: Save the run (listed by `list_runs`).
        progress: Called with a short message before each step.

    Returns:
        The run: original entries, summary, surviving entries, evaluation, fact diff.

    Raises:
        InvalidInput: bad options or input, or fewer than two entries to test.
        NotFound: an unknown bank.
        ProviderError: the summarizer, generator or judge model failed.
    """
    options = TestOptions(
        prompt=prompt,
        max_tokens=max_tokens,
        max_turns=max_turns,
        judge_model=judge_model,
        runs=runs,
    )
    models = models_for(ctx, options.judge_model)
    return run_checked(ctx, source, options, models, save=save, progress=progress)


def run_checked(
    ctx: Context,
    source: Source,
    options: TestOptions,
    models: LabModels,
    *,
    bank: Bank | None = None,
    save: bool = False,
    progress: Progress | None = None,
) -> TestRun:
    """Run a test with options already checked; `bank`: the source's bank, if resolved."""
    say = progress or (lambda message: None)
    say("loading entries")
    loaded = load(ctx, source, bank, models.generator)
    return run_loaded(ctx, source, loaded, options, models, save=save, progress=say)


def run_loaded(
    ctx: Context,
    source: Source,
    loaded: Loaded,
    options: TestOptions,
    models: LabModels,
    *,
    save: bool,
    progress: Progress,
) -> TestRun:
    """Run a test on entries already loaded (`compare` runs two prompts on the same ones)."""
    prompt = options.prompt
    judge = judge_label(models.judge.model if models.judge is not None else None)
    bank = _test_bank(loaded.bank, prompt, options.max_tokens, options.max_turns)
    mode = get_mode(bank.mode, bank=bank.name)  # a draft bank's mode is always defined
    covered, kept, budget = split(bank, loaded.entries)
    completer = models.summarizer
    label = summarizer_label(completer.model)
    progress(f"summarizing {len(covered)} entries with {label}")
    summary = summarize(completer, bank, covered, budget, slack=SUMMARY_SLACK)
    progress(f"judging with {judge}")
    evaluation = _judge(ctx, mode, covered, summary, prompt, models.judge, options.runs)
    notes: list[Followed] = []
    if is_offline(completer.model):
        source_lines = [entry_line(e.content, e.speaker) for e in covered if e.kind != "summary"]
        notes = following(prompt, source_lines, summary)
    diff = probe = None
    if loaded.facts is not None:
        compacted = "\n".join([summary, *(e.content for e in kept)])
        diff = fact_diff(loaded.facts, compacted)
        probe = recall_probe(loaded.facts, compacted, [e.content for e in loaded.entries])
    run = TestRun(
        id=uuid.uuid4().hex,
        bank=loaded.bank.id if loaded.stored else None,
        prompt=prompt,
        source=source,
        source_label=loaded.label,
        original=[as_draft(e) for e in loaded.entries],
        summary=summary,
        surviving=[as_draft(e) for e in kept],
        evaluation=evaluation,
        fact_diff=diff,
        summarizer=label,
        created_at=ctx.clock.now(),
        following=notes,
        probe=probe,
        budget=budget,
        source_tokens=sum(e.token_count for e in covered),
    )
    if save:
        progress("saving the run")
        copied = loaded.entries if loaded.stored else []
        ctx.store.put_lab_run(
            ctx.account,
            run.id,
            run.bank,
            run.created_at,
            run.model_dump_json(),
            entry_ids=[e.id for e in copied],
        )
    return run


def _test_bank(base: Bank, prompt: str, max_tokens: int | None, max_turns: int | None) -> Bank:
    """Return the bank the test plans with: `base` with the prompt and any given thresholds."""
    changes: dict[str, Any] = {"compaction_prompt": prompt}
    if max_tokens is not None:
        changes["max_tokens"] = max_tokens or None
    if max_turns is not None:
        changes["max_turns"] = max_turns or None
    return base.model_copy(update=changes)


def split(bank: Bank, stored: list[Entry]) -> tuple[list[Entry], list[Entry], int]:
    """Return (covered, kept, summary budget) as compaction would plan the partition.

    A partition under its thresholds (or with none set) is tested as if it were just over
    them: every entry but the newest is summarised, within the bank's summary budget (with
    no `max_tokens`, SUMMARY_SHARE of half the partition's tokens, as if it were `max_tokens`).

    Raises:
        InvalidInput: fewer than two entries (the newest is always kept verbatim).
    """
    if len(stored) < 2:
        raise InvalidInput(
            f"a compaction test needs at least 2 entries (the newest is always kept), "
            f"got {len(stored)}"
        )
    key = stored[0].key
    rows = [PartitionRow(e.id, e.kind, e.token_count, e.created_at) for e in stored]
    plan = plan_partition(bank, key, rows)
    if plan.action != "summarize":
        budget = summary_budget(bank)
        if not bank.max_tokens:
            share = TARGET_RATIO * SUMMARY_SHARE
            budget = max(MIN_SUMMARY_TOKENS, int(plan.tokens_before * share))
        return list(stored[:-1]), [stored[-1]], budget
    by_id = {e.id: e for e in stored}
    return [by_id[i] for i in plan.covered], [by_id[i] for i in plan.kept], plan.summary_budget


def _judge(
    ctx: Context,
    mode: Mode,
    covered: list[Entry],
    summary: str,
    prompt: str,
    judge: Completer | None,
    runs: int,
) -> Evaluation:
    lines = [entry_line(e.content, e.speaker if e.kind != "summary" else None) for e in covered]
    return evaluate(
        lines, summary, prompt=prompt, judge=judge, runs=runs, embedder=ctx.embedder(mode)
    )
