"""The config assistant's proposal: what it suggests for a bank, and why."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from memory.models import BankType

OFFLINE_ASSISTANT_LABEL = "rule-based assistant (offline)"
"""The label shown wherever the offline assistant's proposal appears."""


class Proposal(BaseModel):
    """A suggested configuration; nothing changes until it is accepted (`accept`)."""

    model_config = ConfigDict(extra="forbid")

    bank_type: BankType
    compaction_prompt: str
    max_tokens: int | None
    """None: no size threshold."""
    max_turns: int | None
    """None: no entry-count threshold."""
    retention_days: int | None
    """None: indefinite."""
    rationale: list[str]
    """Short lines; numbers derived from the described volume show their arithmetic."""
    assistant: str
    """Who proposed it: OFFLINE_ASSISTANT_LABEL or the model's label."""
    offline: bool
