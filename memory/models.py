"""Typed records that cross module boundaries: banks, entries, search hits and their inputs."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

BankType = Literal["conversation", "general"]
EntryKind = Literal["entry", "summary"]
SearchMethod = Literal["hybrid", "vector", "fts"]

SUMMARY_TAG = "compaction-summary"
"""Tag carried by every compaction summary entry, so users can tell it from their own."""
SUMMARY_SPEAKER = "compaction-summary"
"""Speaker of compaction summaries in conversation banks; reserved (no entry may use it)."""

MEMORY_TYPES = ("fact", "preference", "relationship", "instruction")
"""Optional memory types of general-bank entries."""


class Strict(BaseModel):
    """Base for records loaded from user input: unknown fields are an error."""

    model_config = ConfigDict(extra="forbid")


class Bank(Strict):
    """A memory bank's stored configuration."""

    id: str
    account: str
    name: str
    description: str = ""
    type: BankType
    mode: str
    compaction_prompt: str | None = None
    max_tokens: int | None = None
    max_turns: int | None = None
    retention_days: int | None = None
    created_at: datetime
    updated_at: datetime
    summary_count: int = 0
    """Compaction summaries currently stored (kept up to date by compaction)."""
    last_compaction_at: datetime | None = None
    """When compaction last changed this bank."""

    def has_trigger(self) -> bool:
        """Return True when at least one compaction threshold is set."""
        return bool(self.max_tokens) or bool(self.max_turns)


class BankCreate(Strict):
    """A request to create a bank. Fields not sent are filled from the template and defaults.

    `retention_days` distinguishes "not sent" (type/version default) from an explicit null
    (indefinite) through `model_fields_set`.
    """

    name: str
    type: BankType | None = None
    mode: str | None = None
    template: str | None = None
    description: str | None = None
    compaction_prompt: str | None = None
    max_tokens: int | None = None
    max_turns: int | None = None
    retention_days: int | None = None
    max_age_days: int | None = None


class BankUpdate(Strict):
    """A partial update of a bank; only fields that were sent are applied."""

    name: str | None = None
    type: BankType | None = None
    mode: str | None = None
    description: str | None = None
    compaction_prompt: str | None = None
    max_tokens: int | None = None
    max_turns: int | None = None
    retention_days: int | None = None
    max_age_days: int | None = None


class EntryIn(Strict):
    """One entry to write. `id` and `created_at` are set by the system unless given (imports)."""

    key: str
    content: str
    speaker: str | None = None
    role: str | None = None
    memory_type: str | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    attachments: list[dict[str, Any]] = Field(default_factory=list)
    id: str | None = None
    created_at: datetime | None = None


class Entry(Strict):
    """A stored entry, as load, search and export return it."""

    id: str
    bank_id: str
    key: str
    content: str
    speaker: str | None = None
    role: str | None = None
    memory_type: str | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    attachments: list[dict[str, Any]] = Field(default_factory=list)
    kind: EntryKind = "entry"
    summary_of: list[str] = Field(default_factory=list)
    """For a compaction summary: the ids of the entries it replaces, including those an
    earlier summary it folds in had replaced."""
    created_at: datetime
    token_count: int


class SearchQuery(Strict):
    """A search over one bank: text plus optional filters."""

    text: str
    k: int = 10
    key: str | None = None
    tags: list[str] = Field(default_factory=list)
    speaker: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    method: SearchMethod = "hybrid"
    min_score: float | None = None
    """Hits scoring below this are dropped; None means `memory.search.DEFAULT_MIN_SCORE`."""


class SearchHit(Strict):
    """One entry found by a search, ranked by its best chunk."""

    entry: Entry
    score: float
    chunk_index: int
    chunk_text: str
