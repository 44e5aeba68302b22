"""Propose, then accept: a proposal changes nothing; accepting applies exactly it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory import banks
from memory.assistant.model import propose_with_model
from memory.assistant.records import BankFigures, Proposal
from memory.assistant.rules import propose_offline
from memory.errors import InvalidInput
from memory.models import Bank, BankType, BankUpdate
from memory.validation import check_text

if TYPE_CHECKING:
    from memory.context import Context
    from memory.ports import Completer

MAX_DESCRIPTION = 4000
"""Longest description the assistant reads (characters)."""


def propose(
    description: str,
    *,
    bank_type: BankType | None = None,
    model: Completer | None = None,
    figures: BankFigures | None = None,
) -> Proposal:
    """Return a proposed configuration for `description`; nothing is stored or changed.

    Args:
        description: The use, e.g. "customer support, about 50 messages per day per
            customer"; a stated volume sets the thresholds (the arithmetic is shown).
        bank_type: The bank's type when it is known (an existing bank's, or chosen).
        model: The language model that proposes; None (the default, and what an offline
            `membank/` MEMBANK_LLM_MODEL gives) for the offline rule-based assistant.
        figures: An existing bank's statistics (`observed.figures_of`): the offline rules
            base their numbers on them, and the proposal keeps the bank's mode.

    Raises:
        InvalidInput: a blank or overlong description.
        ProviderError: the model failed or proposed nothing usable.
    """
    check_text("description", description)
    if not description.strip():
        raise InvalidInput("the description is empty: describe what the bank will hold")
    if len(description) > MAX_DESCRIPTION:
        raise InvalidInput(
            f"the description is {len(description)} characters: keep it under {MAX_DESCRIPTION}"
        )
    if model is None:
        return propose_offline(description, bank_type, figures)
    proposal = propose_with_model(description, bank_type, model)
    if figures is None:
        return proposal
    return proposal.model_copy(update={"mode": figures.mode})  # a bank's mode never changes


def accept(ctx: Context, bank: str, proposal: Proposal) -> Bank:
    """Apply exactly `proposal` (prompt, thresholds, retention) to `bank`; returns it updated.

    Raises:
        NotFound: an unknown bank.
        InvalidInput: the proposal is for another bank type, or holds a value a bank cannot
            take (nothing changes).
    """
    current = banks.get(ctx, bank)
    if current.type != proposal.bank_type:
        raise InvalidInput(
            f"the proposal is for a {proposal.bank_type} bank, but bank {current.name!r} is a "
            f"{current.type} bank (a type never changes): ask again with --type {current.type}"
        )
    update = BankUpdate(
        compaction_prompt=proposal.compaction_prompt,
        max_tokens=proposal.max_tokens,
        max_turns=proposal.max_turns,
        retention_days=proposal.retention_days,
    )
    return banks.update(ctx, current.id, update)
