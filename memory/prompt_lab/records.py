"""Records of the compaction test lab: draft entries, sources, planted facts, runs, previews."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memory.errors import InvalidInput
from memory.judge import Evaluation, check_runs, uses_llm
from memory.models import BankType
from memory.providers.extractive import Followed
from memory.validation import check_bank_fields, check_text

FactKind = Literal["name", "number", "date", "preference"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DraftEntry(_Record):
    """An entry held in memory only: pasted, generated, or read from a bank (never written)."""

    key: str
    content: str
    speaker: str | None = None
    role: str | None = None
    created_at: datetime | None = None


class PlantedFact(_Record):
    """A fact planted in synthetic entries, the ground truth of a compaction diff."""

    kind: FactKind
    text: str
    """What the fact is about, as the entries say it, e.g. `order number`."""
    value: str
    """Its planted value, verbatim in one entry, e.g. `48213`; for an updated fact the latest."""
    previous: str | None = None
    """A planted update: the value an earlier entry gave, superseded by a later one (`Update:
    the order number is now ...`). Only the latest counts as kept; the old one stated alone
    is a contradiction."""


class FactDiff(_Record):
    """Which planted facts survived compaction (in the summary or the surviving entries)."""

    kept: list[PlantedFact]
    dropped: list[PlantedFact]
    contradicted: list[PlantedFact]
    """The subject is stated with another value than the planted one."""
    said: list[str] = []
    """What the compacted text said of each contradicted fact (the sentence naming its subject
    with another value), in the order of `contradicted`."""

    def said_of(self, fact: PlantedFact) -> str | None:
        """Return the sentence that contradicts `fact` (None when it is not contradicted)."""
        for item, sentence in zip(self.contradicted, self.said, strict=False):
            if item == fact:
                return sentence
        return None


class ProbeAnswer(_Record):
    """One question of the recall probe and where retrieval found its answer."""

    question: str
    value: str
    """The planted value a right answer holds."""
    summary_answer: str | None
    """The compacted text's best-matching sentence (None: no sentence shares a word)."""
    from_summary: bool
    from_history: bool


class RecallProbe(_Record):
    """Questions about the planted facts answered offline by retrieval, from the compacted
    text (summary and surviving entries) vs from the full history (`memory.prompt_lab.probe`)."""

    answers: list[ProbeAnswer]

    @property
    def from_summary(self) -> int:
        """Questions the compacted text answers."""
        return sum(a.from_summary for a in self.answers)

    @property
    def from_history(self) -> int:
        """Questions the full history answers."""
        return sum(a.from_history for a in self.answers)

    @property
    def ratio(self) -> float:
        """Recall from the summary over recall from the history (1.0: nothing lost)."""
        return self.from_summary / self.from_history if self.from_history else 0.0

    def line(self) -> str:
        """Return the probe in one line, as the CLI and the lab say it."""
        n = len(self.answers)
        return (
            f"recall probe: {n} questions; answered from the summary {self.from_summary}/{n}, "
            f"from the full history {self.from_history}/{n}; ratio {self.ratio:.2f}"
        )


class BankSource(_Record):
    """The entries of an existing bank (one key, or its largest partition), read only."""

    kind: Literal["bank"] = "bank"
    bank: str
    key: str | None = None


class PastedSource(_Record):
    """Entries pasted as JSON lines or `speaker: text` lines."""

    kind: Literal["pasted"] = "pasted"
    text: str
    bank_type: BankType = "conversation"


class SyntheticSource(_Record):
    """Entries generated from a description, with planted facts; seeded, reproducible."""

    kind: Literal["synthetic"] = "synthetic"
    description: str
    bank_type: BankType = "conversation"
    count: int = 20
    seed: int = 0


Source = Annotated[BankSource | PastedSource | SyntheticSource, Field(discriminator="kind")]


class CostPreview(_Record):
    """What a test run will cost before it runs: entries, tokens, judge calls."""

    entries: int
    tokens: int
    """Tokens of the entries the summarizer reads (the prompt's own tokens not counted)."""
    judge_calls: int
    summarizer: str
    judge: str


class TestRun(_Record):
    """One compaction test: what went in, what came out, and how the judge scored it."""

    __test__ = False  # not a pytest test class, whatever its name

    id: str
    bank: str | None
    """The bank's id for a bank source, else None (a test on the create form)."""
    prompt: str
    source: Source
    source_label: str
    original: list[DraftEntry]
    summary: str
    surviving: list[DraftEntry]
    evaluation: Evaluation
    fact_diff: FactDiff | None
    summarizer: str
    created_at: datetime
    following: list[Followed] = []
    """Offline summarizer only: each instruction of the prompt and whether it was followed,
    cannot be followed offline, or is read only by an LLM (empty for an LLM summarizer)."""
    starred: bool = False
    """Marked by hand in the run log (`star_run`)."""
    probe: RecallProbe | None = None
    """The recall probe of the planted facts (None: no facts to ask about)."""
    budget: int | None = None
    """The summary's token budget as compaction planned it (None: saved before it was kept)."""
    source_tokens: int | None = None
    """Tokens of the entries the summary covers."""

    def budget_warning(self) -> str | None:
        """Return a warning when the budget is at least the source: the summary need not
        drop anything, so its scores say little (None: a real compression target)."""
        if self.budget is None or self.source_tokens is None:
            return None
        if self.budget < self.source_tokens:
            return None
        return (
            f"The summary budget ({self.budget:,} tokens) is at least the source "
            f"({self.source_tokens:,} tokens): nothing had to be dropped, so the scores say "
            "little. Lower the max size (or run a suite, which targets 25% of the source)."
        )


class TestOptions(_Record):
    """What a compaction test runs with, checked once, when made (InvalidInput otherwise).

    Every surface builds one at its edge (REST body, tool arguments, CLI flags, lab form);
    nothing after it checks the options again.
    """

    __test__ = False  # not a pytest test class, whatever its name

    prompt: str
    max_tokens: int | None = None
    """Threshold to plan with (default: the bank's; none for pasted/synthetic entries)."""
    max_turns: int | None = None
    judge_model: str | None = None
    """The judge (None: the settings' `judge_model`, by default the offline heuristic judge)."""
    runs: int = 1
    """How many times the judge scores the case (mean and spread per criterion)."""

    @model_validator(mode="after")
    def _checked(self) -> TestOptions:
        """Refuse a blank prompt, runs outside 1-MAX_RUNS, a threshold out of range, or a
        blank or unknown offline judge (InvalidInput), before anything runs."""
        check_text("compaction prompt", self.prompt)
        if not self.prompt.strip():
            raise InvalidInput("the compaction prompt is empty: give the instructions to test")
        check_runs(self.runs)
        check_bank_fields(
            compaction_prompt=self.prompt, max_tokens=self.max_tokens, max_turns=self.max_turns
        )
        uses_llm(self.judge_model)
        return self
