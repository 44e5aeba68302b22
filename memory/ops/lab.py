"""Lab use cases: test a compaction prompt, preview or compare tests, judge a summary, the
config assistant. Every surface (REST, MCP, CLI, the lab pages) calls these.

A request's options are checked once, when the surface builds it (`TestOptions`,
`JudgeRequest`: InvalidInput names what is wrong); the bank is resolved once, here
(`prepare_test`), and handed down as a `Bank`, never again as an id.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memory import assistant, banks, entries
from memory.assistant import Proposal
from memory.assistant.observed import figures_of
from memory.assistant.records import BankFigures
from memory.config import get_mode
from memory.context import Context
from memory.errors import InvalidInput, NotFound
from memory.judge import Evaluation, check_runs, evaluate, uses_llm
from memory.models import Bank, BankType
from memory.prompt_lab.pasted import parse_pasted
from memory.prompt_lab.records import (
    BankSource,
    CostPreview,
    DraftEntry,
    Source,
    SyntheticSource,
    TestOptions,
    TestRun,
)
from memory.prompt_lab.run import (
    LabModels,
    Progress,
    chosen_judge,
    judge_for,
    models_for,
    preview_checked,
    run_checked,
)
from memory.prompt_lab.saved import compare_checked
from memory.prompt_lab.sources import llm_for
from memory.prompt_lab.suite import SuiteRequest, SuiteResult
from memory.prompt_lab.suite import run_suite as _run_suite
from memory.prompt_lab.suite import suite_set as _suite_set
from memory.prompts import entry_line


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def bank_of(ctx: Context, ref: str) -> Bank:
    """Return the account's bank `ref` (an id or a name).

    Raises:
        NotFound: no such bank; a bank of another account gets the very same answer (the
            message names no storage location), so its existence is never revealed.
    """
    try:
        return banks.get(ctx, ref)
    except NotFound:
        raise NotFound(
            f"no bank {ref[:80]!r} in this account: list its banks (`membank bank list`, "
            "GET /memory_banks, or the list_memory_banks tool)"
        ) from None


class LabTest(_Request):
    """A compaction test: where its entries come from, its checked options, whether to save."""

    source: Source
    options: TestOptions
    save: bool = False
    """Save the run (listed by `membank lab-runs` and the lab's saved runs)."""


@dataclass(frozen=True)
class PreparedTest:
    """A test whose bank (for a bank source) and models are resolved: ready to run, in a job
    or now."""

    request: LabTest
    bank: Bank | None
    models: LabModels


def prepare_test(ctx: Context, request: LabTest) -> PreparedTest:
    """Resolve the test's bank (before any work starts, so a surface answers NotFound now)
    and its models (summarizer, judge, synthetic generator) from the context's settings.

    Raises:
        NotFound: an unknown bank.
    """
    models = models_for(ctx, request.options.judge_model)
    source = request.source
    if not isinstance(source, BankSource):
        return PreparedTest(request, None, models)
    bank = bank_of(ctx, source.bank)
    named = source.model_copy(update={"bank": bank.id})  # the run names the bank by its id
    return PreparedTest(request.model_copy(update={"source": named}), bank, models)


def run_prepared(ctx: Context, prepared: PreparedTest, progress: Progress | None = None) -> TestRun:
    """Run a prepared test: summarize with the prompt, judge, (save); no bank changes.

    Raises:
        InvalidInput: fewer than two entries to test, or bad pasted text.
        ProviderError: the summarizer, generator or judge model failed.
    """
    request = prepared.request
    return run_checked(
        ctx,
        request.source,
        request.options,
        prepared.models,
        bank=prepared.bank,
        save=request.save,
        progress=progress,
    )


def test_compaction(ctx: Context, request: LabTest, progress: Progress | None = None) -> TestRun:
    """Resolve and run a compaction test now (`prepare_test` then `run_prepared`)."""
    return run_prepared(ctx, prepare_test(ctx, request), progress)


test_compaction.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def preview(ctx: Context, request: LabTest) -> CostPreview:
    """Return what the test would cost (entries, tokens, judge calls); runs nothing."""
    prepared = prepare_test(ctx, request)
    return preview_checked(ctx, request.source, request.options, prepared.models, prepared.bank)


def compare(
    ctx: Context,
    request: LabTest,
    other: TestOptions,
    progress: Progress | None = None,
) -> tuple[TestRun, TestRun]:
    """Run the request's options and `other` on the same entries (loaded once)."""
    prepared = prepare_test(ctx, request)
    models = (prepared.models, models_for(ctx, other.judge_model))
    return compare_checked(
        ctx,
        request.source,
        (request.options, other),
        models,
        bank=prepared.bank,
        save=request.save,
        progress=progress,
    )


def run_suite(ctx: Context, request: SuiteRequest, judge_model: str | None = None) -> SuiteResult:
    """Run a suite (prompts x cases x rounds, judged, thresholds applied); changes no bank.

    Raises:
        NotFound: an unknown bank.
        InvalidInput: no case to test, or bad pasted text.
        ProviderError: the summarizer or the judge failed.
    """
    source = request.source
    if isinstance(source, BankSource):
        named = source.model_copy(update={"bank": bank_of(ctx, source.bank).id})
        request = request.model_copy(update={"source": named})
    return _run_suite(ctx, request, models_for(ctx, judge_model))


def suite_set(ctx: Context, request: SuiteRequest) -> list[DraftEntry]:
    """Return the suite's cases as one frozen set of entries (one key per case)."""
    source = request.source
    if isinstance(source, BankSource):
        named = source.model_copy(update={"bank": bank_of(ctx, source.bank).id})
        request = request.model_copy(update={"source": named})
    return _suite_set(ctx, request, models_for(ctx))


class JudgeRequest(_Request):
    """A summary to score against its source: a bank's entries (one key, or all) or pasted
    entries; checked once, when made."""

    summary: str
    bank: str | None = None
    key: str | None = None
    pasted: str | None = None
    """Entries as JSON lines or `speaker: text` lines."""
    bank_type: BankType = "conversation"
    """The pasted entries' bank type."""
    prompt: str | None = None
    """The prompt the summary was written for (default: the bank's)."""
    judge_model: str | None = None
    """A litellm model name (None: the settings' judge, the offline heuristic by default)."""
    runs: int = 1

    @model_validator(mode="after")
    def _checked(self) -> JudgeRequest:
        if (self.bank is None) == (self.pasted is None):
            raise InvalidInput("give exactly one source: a bank or pasted entries")
        if self.key is not None and self.bank is None:
            raise InvalidInput("a key needs a bank: it names a partition of the bank's entries")
        if not self.summary.strip():
            raise InvalidInput("the summary is empty: give the summary text to judge")
        check_runs(self.runs)
        uses_llm(self.judge_model)
        return self


def judge(ctx: Context, request: JudgeRequest) -> Evaluation:
    """Score the summary against its source with the chosen judge (heuristic offline).

    Raises:
        NotFound: an unknown bank.
        InvalidInput: no entries to judge against, or bad pasted text.
        ProviderError: the judge model could not be reached.
    """
    prompt = request.prompt
    if request.bank is not None:
        bank = bank_of(ctx, request.bank)
        found = entries.load(ctx, bank, request.key) if request.key else entries.read(ctx, bank)
        if not found:
            where = f" under key {request.key!r}" if request.key else ""
            raise InvalidInput(
                f"bank {bank.name!r} has no entries{where}: nothing to judge against"
            )
        source = [entry_line(e.content, e.speaker) for e in found]
        prompt = prompt if prompt is not None else bank.compaction_prompt
        mode = get_mode(bank.mode, bank=bank.name)
    else:
        assert request.pasted is not None  # the validator wants one source
        drafts = parse_pasted(request.pasted, request.bank_type)
        source = [entry_line(d.content, d.speaker) for d in drafts]
        mode = get_mode("balanced")
    return evaluate(
        source,
        request.summary,
        prompt=prompt,
        judge=judge_for(ctx, chosen_judge(ctx, request.judge_model)),
        runs=request.runs,
        embedder=ctx.embedder(mode),
    )


class ProposeRequest(_Request):
    """What a bank will hold, in plain words; for an existing bank, its type is used."""

    description: str = Field(
        description="e.g. 'customer support, about 50 messages per day per customer'"
    )
    type: BankType | None = None
    bank: str | None = None
    """An existing bank to propose for (a differing `type` is refused)."""


def propose(ctx: Context, request: ProposeRequest) -> Proposal:
    """Return a proposed prompt, thresholds and retention with a rationale; nothing changes.
    For an existing bank the proposal rests on its statistics and keeps its mode.

    Raises:
        NotFound: an unknown bank.
        InvalidInput: a `type` other than the bank's, or a blank description.
        ProviderError: the assistant's model failed.
    """
    bank_type = request.type
    figures = None
    if request.bank is not None:
        bank = bank_of(ctx, request.bank)
        if bank_type is not None and bank_type != bank.type:
            raise InvalidInput(
                f"bank {bank.name!r} is a {bank.type} bank, not {bank_type}: drop type"
            )
        bank_type = bank.type
        figures = bank_figures(ctx, bank)
    model = llm_for(ctx.settings)  # the settings' LLM, or None: the offline rules
    return assistant.propose(request.description, bank_type=bank_type, model=model, figures=figures)


def bank_figures(ctx: Context, bank: Bank) -> BankFigures:
    """Return what the bank's statistics (over all its entries) tell the assistant."""
    from memory import stats  # polars: only when asked

    found = stats.compute(ctx, bank, since=datetime.min.replace(tzinfo=UTC), top=1)
    return figures_of(bank, found)


def accept(ctx: Context, bank_ref: str, proposal: Proposal) -> Bank:
    """Apply exactly `proposal` (prompt, thresholds, retention) to a bank; returns it.

    Raises:
        NotFound: an unknown bank.
        InvalidInput: the proposal is for another bank type.
    """
    return assistant.accept(ctx, bank_of(ctx, bank_ref).id, proposal)


def default_retention(bank_type: BankType) -> int | None:
    """Return the retention a new bank of `bank_type` gets when its create request omits it
    (the lab's create form starts from it)."""
    return banks.default_retention(bank_type, banks.CURRENT_API_VERSION)


class ProposalTest(_Request):
    """A test of a proposal's prompt and thresholds: on the bank it was made for, when it
    holds entries to compact, else on entries made up from the description."""

    proposal: Proposal
    description: str
    bank: str | None = None
    """The bank the proposal is for (None: a new bank)."""


def test_proposal(ctx: Context, request: ProposalTest, progress: Progress | None = None) -> TestRun:
    """Run (and save) a compaction test of the proposal: the bank's own entries when it has
    two or more, else synthetic ones from the description (with planted facts, so the
    fact diff shows what the prompt keeps).

    Raises:
        NotFound: an unknown bank.
        InvalidInput: a prompt or threshold a test cannot take.
        ProviderError: the summarizer, generator or judge model failed.
    """
    proposal = request.proposal
    options = TestOptions(
        prompt=proposal.compaction_prompt,
        max_tokens=proposal.max_tokens,
        max_turns=proposal.max_turns,
    )
    source: Source = SyntheticSource(description=request.description, bank_type=proposal.bank_type)
    bank = bank_of(ctx, request.bank) if request.bank is not None else None
    if bank is not None and sum(p.entries for p in ctx.store.partition_sizes(bank.id)) >= 2:
        source = BankSource(bank=bank.id)
    else:
        bank = None
    test = LabTest(source=source, options=options, save=True)
    return run_prepared(ctx, PreparedTest(test, bank, models_for(ctx)), progress)


test_proposal.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
