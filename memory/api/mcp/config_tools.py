"""The config assistant and test compaction as tools: propose (nothing changes), accept a
proposal onto a bank, and try a compaction prompt (the bank never changes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field, model_validator

from memory.api.mcp.inputs import BANK_ID, KEY
from memory.api.mcp.tooling import ToolInput
from memory.assistant import Proposal
from memory.context import Context
from memory.models import Bank, BankType
from memory.ops import lab
from memory.prompt_lab import BankSource, Source, TestOptions, TestRun
from memory.prompt_lab.records import PastedSource, SyntheticSource


class GenerateConfig(ToolInput):
    """A plain description of what a bank will hold."""

    description: str = Field(
        description="e.g. 'customer support, about 50 messages per day per customer': a "
        "stated volume sets the thresholds."
    )
    type: BankType | None = Field(None, description="The bank type, when creating one.")
    memory_bank_id: str | None = Field(
        None, description="An existing bank to propose for (its type is used). " + BANK_ID
    )


class AcceptConfig(ToolInput):
    """A proposal to apply to a bank."""

    memory_bank_id: str = Field(description=BANK_ID)
    proposal: Proposal = Field(description="The proposal, exactly as generated.")


class TestCompaction(ToolInput):
    """A compaction prompt to try on a bank's entries, or on pasted or synthetic ones."""

    __test__ = False  # not a pytest test class, whatever its name

    compaction_prompt: str = Field(description="The candidate prompt.")
    memory_bank_id: str | None = Field(None, description="Try it on this bank. " + BANK_ID)
    key: str | None = Field(None, description=KEY + " Default: the bank's largest.")
    source: PastedSource | SyntheticSource | None = Field(
        None,
        discriminator="kind",
        description="Instead of a bank: pasted entries ({kind: pasted, text}) or synthetic "
        "ones from a description ({kind: synthetic, description, count, seed}).",
    )
    max_tokens: int | None = Field(None, description="Threshold (default: the bank's).")
    max_turns: int | None = Field(None, description="Threshold (default: the bank's).")

    @model_validator(mode="after")
    def _one_source(self) -> TestCompaction:
        if (self.memory_bank_id is None) == (self.source is None):
            raise ValueError("give exactly one of memory_bank_id or source")
        if self.source is not None and self.key is not None:
            raise ValueError("key applies to a bank's entries only: drop it or use a bank")
        return self

    def request(self) -> lab.LabTest:
        """Return the test to run, its options checked (InvalidInput: a tool error)."""
        source: Source = self.source or BankSource(bank=str(self.memory_bank_id), key=self.key)
        options = TestOptions(
            prompt=self.compaction_prompt, max_tokens=self.max_tokens, max_turns=self.max_turns
        )
        return lab.LabTest(source=source, options=options)


def generate_memory_bank_config(ctx: Context, args: GenerateConfig) -> Proposal:
    """Propose a compaction prompt, thresholds and retention for a described use, with a short
    rationale; nothing is stored (apply it with accept_memory_bank_config)."""
    request = lab.ProposeRequest(
        description=args.description, type=args.type, bank=args.memory_bank_id
    )
    return lab.propose(ctx, request)


def accept_memory_bank_config(ctx: Context, args: AcceptConfig) -> Bank:
    """Apply exactly a proposal (prompt, thresholds, retention) to a bank; returns the bank."""
    return lab.accept(ctx, args.memory_bank_id, args.proposal)


def test_memory_bank_compaction(ctx: Context, args: TestCompaction) -> TestRun:
    """Try a compaction prompt: the original entries, the summary, the surviving entries and
    a judge's scored evaluation (offline heuristic unless a model is set); nothing changes."""
    return lab.test_compaction(ctx, args.request())


TOOLS: list[Callable[..., Any]] = [
    generate_memory_bank_config,
    accept_memory_bank_config,
    test_memory_bank_compaction,
]
