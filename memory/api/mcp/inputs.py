"""The input of each MCP tool: strict pydantic models whose field descriptions the model reads.

Fields carry the names the REST API and the Python records use, so a tool call and a REST
body look alike; `to_request` methods build the core's own request records from what was
sent (an omitted field stays omitted: e.g. no `retention_days` means the type's default,
an explicit null means indefinite).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from memory.api.mcp.tooling import ToolInput
from memory.api.schemas import MAX_PAGE
from memory.models import BankCreate, BankType, BankUpdate, EntryIn, SearchMethod, SearchQuery
from memory.ops.exports import ExportRequest
from memory.transfer.export.records import ExportFilters, ExportFormat
from memory.validation import as_utc

BANK_ID = "The memory bank's id (its name works too), as list_memory_banks returns it."
KEY = "The partition: a conversation id (conversation banks) or a group key (general banks)."


class Paged(ToolInput):
    """A page of a list, as the REST API pages it."""

    limit: int = Field(100, ge=1, le=MAX_PAGE, description="Page size, 1-1000.")
    offset: int = Field(0, ge=0, le=2**31 - 1, description="Items to skip (next_offset).")


class ListBanks(Paged):
    """Which banks to list."""

    type: BankType | None = Field(None, description="Only banks of this type.")
    cursor: str | None = Field(
        None, max_length=200, description="next_cursor of the page before (instead of offset)."
    )


class BankRef(ToolInput):
    """One bank."""

    memory_bank_id: str = Field(description=BANK_ID)


class BankFields(ToolInput):
    """The settable fields of a bank, shared by create and update."""

    description: str | None = Field(None, description="What the bank stores.")
    compaction_prompt: str | None = Field(
        None,
        description="How compaction summarizes old entries; null or empty deletes the overflow "
        "with no summary.",
    )
    max_tokens: int | None = Field(
        None, description="Compact a partition above this many tokens; 0 or null disables."
    )
    max_turns: int | None = Field(
        None, description="Compact a partition above this many entries; 0 or null disables."
    )
    retention_days: int | None = Field(
        None,
        description="Delete entries older than this many days (1 or more); null keeps them "
        "indefinitely. Omitted on create: 90 for conversation banks, indefinite for general.",
    )


class CreateBank(BankFields):
    """A new bank; fields not sent come from the template, then the defaults."""

    name: str = Field(description="A name unique in the account.")
    type: BankType | None = Field(
        None, description="conversation (speakers, threads) or general; fixed for life."
    )
    mode: str | None = Field(
        None, description="fast, balanced (default) or accurate; fixed for life."
    )
    template: str | None = Field(
        None, description="Prefill from a template (see list_memory_bank_templates)."
    )

    def to_request(self) -> BankCreate:
        """Return the core's create request with exactly the fields that were sent."""
        return BankCreate.model_validate(self.model_dump(exclude_unset=True))


class UpdateBank(BankFields):
    """A partial update: only the fields sent change."""

    memory_bank_id: str = Field(description=BANK_ID)
    name: str | None = Field(None, description="A new name, unique in the account.")
    type: BankType | None = Field(None, description="Fixed at creation: any change is refused.")
    mode: str | None = Field(None, description="Fixed at creation: any change is refused.")

    def to_request(self) -> BankUpdate:
        """Return the core's update request with exactly the fields that were sent."""
        sent = self.model_dump(exclude_unset=True, exclude={"memory_bank_id"})
        return BankUpdate.model_validate(sent)


class WriteEntry(ToolInput):
    """One entry to write."""

    memory_bank_id: str = Field(description=BANK_ID)
    key: str = Field(description=KEY)
    content: str = Field(description="The text to remember (up to 256 kB).")
    speaker: str | None = Field(None, description="Who said it: required in conversation banks.")
    role: str | None = Field(None, description="system, user, assistant or a role of your own.")
    memory_type: str | None = Field(
        None, description="General banks only: fact, preference, relationship or instruction."
    )
    tags: list[str] = Field(default_factory=list, description="Short labels to filter by.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Any JSON object.")

    def to_entry(self) -> EntryIn:
        """Return the core's entry record."""
        return EntryIn.model_validate(self.model_dump(exclude={"memory_bank_id"}))


class Search(ToolInput):
    """A search of one bank."""

    memory_bank_id: str = Field(description=BANK_ID)
    text: str = Field(description="What to look for, in any wording.")
    k: int = Field(10, description="How many entries to return, 1-1000.")
    key: str | None = Field(None, description="Only this partition.")
    tags: list[str] = Field(default_factory=list, description="Only entries with every tag.")
    speaker: str | None = Field(None, description="Only this speaker's entries.")
    since: datetime | None = Field(None, description="Created at or after (ISO, UTC default).")
    until: datetime | None = Field(None, description="Created before (ISO, UTC default).")
    method: SearchMethod = Field("hybrid", description="hybrid (default), vector or fts.")
    min_score: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Drop hits scoring below this (0-1); null: the server's default floor.",
    )

    def to_query(self) -> SearchQuery:
        """Return the core's search query."""
        return SearchQuery(
            text=self.text,
            k=self.k,
            key=self.key,
            tags=self.tags,
            speaker=self.speaker,
            since=as_utc(self.since, "since") if self.since else None,
            until=as_utc(self.until, "until") if self.until else None,
            method=self.method,
            min_score=self.min_score,
        )


class BankPage(Paged):
    """A page of something of one bank."""

    memory_bank_id: str = Field(description=BANK_ID)


class EntryRef(ToolInput):
    """One entry of a bank."""

    memory_bank_id: str = Field(description=BANK_ID)
    entry_id: str = Field(description="The entry's id, as write, search or load return it.")


class LoadThread(Paged):
    """One partition's thread, a page at a time."""

    memory_bank_id: str = Field(description=BANK_ID)
    key: str = Field(description=KEY)
    cursor: str | None = Field(
        None, max_length=200, description="next_cursor of the page before (instead of offset)."
    )


class ForgetEntry(ToolInput):
    """One entry to delete for good."""

    memory_bank_id: str = Field(description=BANK_ID)
    entry_id: str = Field(description="The entry's id, as write, search or load return it.")


class StatsInput(ToolInput):
    """A bank's statistics over a time frame."""

    memory_bank_id: str = Field(description=BANK_ID)
    days: int | None = Field(None, description="The last N days (default 30).")
    since: datetime | None = Field(None, description="Frame start, instead of days (ISO).")
    until: datetime | None = Field(None, description="Frame end, exclusive (ISO).")
    top: int = Field(10, ge=1, le=100, description="Rows of each breakdown table.")


class CompactNow(ToolInput):
    """Compact a bank now."""

    memory_bank_id: str = Field(description=BANK_ID)
    key: str | None = Field(None, description="Only this partition (default: every one).")


class ExportSpec(ToolInput):
    """An export of a memory bank, as `POST /authenticated/resource-exports` takes it."""

    resource_type: Literal["memory_bank"] = Field(description='Always "memory_bank".')
    resource_id: str = Field(description=BANK_ID)
    format: ExportFormat = Field("json", description="json (default, importable) or parquet.")
    filters: ExportFilters = Field(
        default_factory=ExportFilters,
        description="Only matching entries: key, speaker, tags (all), since, until.",
    )

    def request(self) -> ExportRequest:
        """Return the export request `memory.ops.exports` takes."""
        return ExportRequest.model_validate(
            self.model_dump(include=set(ExportRequest.model_fields))
        )


class StartExport(ExportSpec):
    """An export to start, and how long to wait for it."""

    wait: float = Field(10, ge=0, le=30, description="Seconds to wait for it to finish.")


class ExportRef(ToolInput):
    """One export job."""

    export_id: str = Field(description="The id create_resource_export returned.")
    wait: float = Field(0, ge=0, le=30, description="Seconds to wait for it to finish.")


class ExportChunk(ExportRef):
    """A byte range of a finished export's file (any format, any size)."""

    offset: int = Field(0, ge=0, le=2**53, description="First byte to read (next_offset).")
    length: int = Field(
        262_144, ge=1, le=1_048_576, description="Bytes to read, at most 1 MiB per call."
    )
