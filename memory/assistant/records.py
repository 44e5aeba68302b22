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
    mode: str | None = None
    """The bank's mode (embedder and chunking, fixed at creation): an existing bank's own, or
    the matched template's for a new bank; accepting never changes a bank's mode, the
    create form starts from it. None: no preference (proposals made before it was kept)."""


class BankFigures(BaseModel):
    """What an existing bank's statistics say (`memory.stats` over all its entries), as the
    offline assistant reads them to base its numbers on the bank rather than on guesses."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bank: str
    """The bank's name."""
    mode: str
    entries: int
    keys: int
    days: float
    """Days from the oldest entry to now (at least 1 when there are entries)."""
    tokens_per_entry: float | None
    """Average tokens of one entry (None: no entries)."""
    entries_per_key: float | None
    """Average entries of one key."""
    largest_key_entries: int | None
    """Entries of the largest key."""
    oldest_days: float | None
    """Age of the oldest entry, in days."""
    p95_age_days: float | None
    """95% of the entries are younger than this, in days."""

    @property
    def tokens_per_key(self) -> float | None:
        """Return the average tokens one key holds (average entry x entries per key)."""
        if self.tokens_per_entry is None or self.entries_per_key is None:
            return None
        return self.tokens_per_entry * self.entries_per_key
