"""The export record: formats, filters, what an export wrote or would write, the header
every export carries about itself, and one entry as a JSON export stores it."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memory import validation
from memory.models import Bank
from memory.types.entry_filter import EntryFilter
from memory.types.fields import check_window

if TYPE_CHECKING:
    from memory.context import Context

JSON_FORMAT = "membank.export"
JSON_SCHEMA_VERSION = 1
"""Version of the JSON export layout; importers accept this version and older."""
ExportFormat = Literal["json", "parquet"]
PartitionBy = Literal["date", "key"]
Progress = Callable[[int], None]


class ExportFilters(BaseModel):
    """Which entries to export: every given filter must match."""

    model_config = ConfigDict(extra="forbid")

    key: str | None = None
    speaker: str | None = None
    tags: list[str] = Field(default_factory=list)
    """An entry must carry every one of these tags."""
    since: datetime | None = None
    """Entries created at or after this time."""
    until: datetime | None = None
    """Entries created before this time (exclusive)."""

    def check(self, bank: Bank) -> None:
        """Raise InvalidInput when the time frame is empty (since not before until), for a
        speaker filter on a general bank (its entries have no speaker), or for a label no
        entry can hold (see `validation.check_filters`)."""
        validation.check_filters(bank, key=self.key, speaker=self.speaker, tags=self.tags)
        check_window(self.since, self.until)

    def entry_filter(self) -> EntryFilter:
        """Return these conditions as an entry filter (an empty one matches every entry)."""
        return EntryFilter(
            keys=None if self.key is None else (self.key,),
            speaker=self.speaker,
            tags=tuple(self.tags),
            since=self.since,
            until=self.until,
        )


class ExportEstimate(BaseModel):
    """What an export would write: entry count and approximate size, before running it."""

    format: ExportFormat
    entries: int
    bytes: int
    with_vectors: bool = False
    note: str


class ExportResult(BaseModel):
    """What an export wrote."""

    format: ExportFormat
    path: str
    entries: int
    bytes: int
    """Size on disk of the file (or of every file of a partitioned dataset)."""
    files: int
    partition_by: PartitionBy | None = None
    with_vectors: bool = False


def json_header(ctx: Context, bank: Bank, flt: ExportFilters) -> dict[str, Any]:
    return header(ctx, bank, flt, JSON_FORMAT, JSON_SCHEMA_VERSION)


def header(ctx: Context, bank: Bank, flt: ExportFilters, fmt: str, version: int) -> dict[str, Any]:
    """Return what an export says about itself: format, version, time, bank, filters."""
    return {
        "format": fmt,
        "version": version,
        "exported_at": ctx.clock.now().astimezone(UTC).isoformat(),
        "bank": bank.model_dump(mode="json"),
        "filters": flt.model_dump(mode="json"),
    }


def _no_constant(name: str) -> None:
    return None


def stored_json(text: str | None, empty: str) -> Any:
    """Return stored JSON text as data, with any NaN or Infinity (stored before writes
    refused them) read as null, so the export stays valid JSON."""
    return json.loads(text or empty, parse_constant=_no_constant)


def entry_record(row: dict[str, Any]) -> dict[str, Any]:
    """Return the JSON export record of an entry row (`entry_batches`: the Entry fields but
    bank_id)."""
    created: datetime = row["created_at"]
    created = created.replace(tzinfo=UTC) if created.tzinfo is None else created.astimezone(UTC)
    return {
        "id": row["id"],
        "key": row["key"],
        "kind": row["kind"],
        "speaker": row["speaker"],
        "role": row["role"],
        "memory_type": row["memory_type"],
        "content": row["content"],
        "tags": row["tags"] or [],
        "metadata": stored_json(row["metadata"], "{}"),
        "attachments": stored_json(row["attachments"], "[]"),
        "summary_of": row["summary_of"] or [],
        "created_at": created.isoformat(),
        "token_count": row["token_count"],
    }
