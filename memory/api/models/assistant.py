"""What the config assistant's routes take: a description, or a proposal to accept."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from memory.api.schemas import Request
from memory.assistant import Proposal
from memory.models import BankType


class ConfigRequest(Request):
    """What the bank will hold, in plain words (a stated volume sets the thresholds)."""

    description: str = Field(
        description="e.g. 'customer support, about 50 messages per day per customer'"
    )
    type: BankType | None = None


class ConfigForBank(Request):
    """What the bank holds, in plain words; the proposal fits the bank's type."""

    description: str


def _exactly(value: Any) -> Any:
    """Validate a sent proposal strictly: it is one this API returned, so `0` is not
    `false` and `"5"` is not 5 (the lax defaults would store a coerced copy)."""
    return Proposal.model_validate(value, strict=True) if isinstance(value, dict) else value


class AcceptRequest(Request):
    """The proposal to apply, as `generate_memory_bank_config` returned it."""

    proposal: Annotated[Proposal, BeforeValidator(_exactly)]
