"""Typed records that cross module boundaries: banks, entries, search hits and their inputs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memory.types.fields import (
    Key,
    Label,
    RetentionDays,
    Speaker,
    Tag,
    Text,
    Threshold,
    UtcTime,
    WholeNumber,
    as_utc,
    check_window,
)

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

    name: Label
    type: BankType | None = None
    mode: str | None = None
    template: str | None = None
    description: Text | None = None
    compaction_prompt: Text | None = None
    max_tokens: Threshold | None = None
    max_turns: Threshold | None = None
    retention_days: RetentionDays | None = None
    max_age_days: WholeNumber | None = None


class BankUpdate(Strict):
    """A partial update of a bank; only fields that were sent are applied."""

    name: Label | None = None
    type: BankType | None = None
    mode: str | None = None
    description: Text | None = None
    compaction_prompt: Text | None = None
    max_tokens: Threshold | None = None
    max_turns: Threshold | None = None
    retention_days: RetentionDays | None = None
    max_age_days: WholeNumber | None = None


class EntryIn(Strict):
    """One entry to write. `id` and `created_at` are set by the system unless given (imports).

    Its fields are checked by `validation.check_entry` when it is written, not here, with
    the rules of `memory.types.fields` (labels, JSON-safe metadata): their rules depend on
    the bank (a speaker only in conversation banks), ingest files a refused row under the
    rule's code, and callers build an EntryIn before they know the bank."""

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

    @classmethod
    def from_fields(cls, bank_id: str, row: Mapping[str, Any]) -> Entry:
        """Return the entry of a row of its Arrow fields (`EntryStore.entry_batches`,
        `search_chunks`: `metadata` and `attachments` as JSON text, `content` None for a
        search's chunk row of a later chunk, whose `chunk_text` then stands in)."""
        content = row.get("content")
        return cls(
            id=row["id"],
            bank_id=bank_id,
            key=row["key"],
            content=content if content is not None else row["chunk_text"],
            speaker=row.get("speaker"),
            role=row.get("role"),
            memory_type=row.get("memory_type"),
            tags=list(row.get("tags") or []),
            metadata=json.loads(row.get("metadata") or "{}"),
            attachments=json.loads(row.get("attachments") or "[]"),
            kind=row.get("kind") or "entry",
            summary_of=list(row.get("summary_of") or []),
            created_at=as_utc(row["created_at"]),
            token_count=int(row["token_count"]),
        )


ENTRY_FIELDS = (
    "id",
    "key",
    "speaker",
    "role",
    "memory_type",
    "kind",
    "chunk_count",
    "content",
    "tags",
    "metadata",
    "attachments",
    "summary_of",
    "created_at",
    "token_count",
)
"""An entry's fields as the store hands them out in Arrow (`EntryStore.entry_batches`): the
Entry's but bank_id, `metadata` and `attachments` as JSON text, plus how many chunks it has."""
CHUNK_FIELDS = ("chunk", "chunk_text", "carries")
"""Fields of one chunk a search finds besides its entry's: its number in the entry, its text,
and the id of the turn its full-text row carries (None: none; `EntryStore.search_chunks`)."""
HIT_FIELDS = (*ENTRY_FIELDS, "chunk", "chunk_text")
"""What a search reads of each chunk it finds by default (and `_score`)."""


class SearchQuery(Strict):
    """A search over one bank: text plus optional filters."""

    text: Text
    k: int = 10
    key: Key | None = None
    tags: list[Tag] = Field(default_factory=list)
    speaker: Speaker | None = None
    since: UtcTime | None = None
    until: UtcTime | None = None
    method: SearchMethod = "hybrid"
    min_score: float | None = None
    """Hits scoring below this are dropped; None means `memory.search.DEFAULT_MIN_SCORE`."""

    def model_post_init(self, context: Any, /) -> None:
        check_window(self.since, self.until)


class SearchHit(Strict):
    """One entry found by a search, ranked by its best chunk: `chunk` is that chunk's position
    in the entry (0: the first, and the only one of an entry short enough to embed whole),
    `chunk_text` its text."""

    entry: Entry
    score: float
    chunk: int
    chunk_text: str
