"""Request and response records of the REST API that the core does not already define.

Requests are `extra="forbid"`: an unknown field is a 422 naming it. Lists are pages:
`?limit=` (1-1000, default 100) and `?offset=` (0 or more); a page says the total and
the `next_offset` to ask for (null on the last page); lists with cursors (threads, tagged
entries, banks, a user's memories) also give `next_cursor` to send as `?cursor=`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from memory.api.models.errors import ErrorBody, code_of
from memory.config import Template
from memory.ops import exports
from memory.ops.jobs import JobRecord, JobStatus
from memory.prompt_lab import PastedSource, SyntheticSource, TestOptions
from memory.transfer.export.records import ExportFormat

T = TypeVar("T")
MAX_PAGE = 1000


class Request(BaseModel):
    """Base of request bodies: unknown fields are an error."""

    model_config = ConfigDict(extra="forbid")


class Page(BaseModel, Generic[T]):
    """One page of a list."""

    data: list[T]
    total: int
    """Items in the whole list."""
    limit: int
    offset: int
    next_offset: int | None
    """The offset of the next page; null on the last one."""
    next_cursor: str | None = None
    """Where lists with cursors (threads, banks, memories) continue: send it as `cursor`;
    null on the last page (a cursor stays right while items are added or deleted; an offset
    shifts)."""


def page(items: list[T], limit: int, offset: int) -> Page[T]:
    """Return the page of `items` at `offset`, `limit` long."""
    shown = items[offset : offset + limit]
    following = offset + len(shown)
    return Page[T](
        data=shown,
        total=len(items),
        limit=limit,
        offset=offset,
        next_offset=following if following < len(items) else None,
    )


class TemplateOut(Template):
    """A template as the API lists it."""


class Deleted(BaseModel):
    """What a delete removed."""

    id: str
    deleted: bool = True


class SourceReset(BaseModel):
    """A bank whose content source was reset ("Delete source"): every entry is gone."""

    id: str
    source_reset: bool = True


class AgentRef(BaseModel):
    """An agent that uses a bank."""

    id: str
    name: str


class EntryWrite(Request):
    """One entry to write (a conversation bank needs `speaker`; a general bank has none)."""

    key: str = Field(description="the partition: a conversation id (or a group key)")
    content: str = Field(description="the entry's text (up to 256 kB)")
    speaker: str | None = None
    role: str | None = Field(default=None, description="system, user, assistant or your own")
    memory_type: Literal["fact", "preference", "relationship", "instruction"] | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class CompactRequest(Request):
    """What to compact now: every partition over a threshold, or one `key`."""

    key: str | None = None


class TestCompactionRequest(Request):
    """A compaction prompt to try on the bank's entries; the bank never changes."""

    __test__ = False  # not a pytest test class, whatever its name

    compaction_prompt: str
    key: str | None = Field(default=None, description="the partition (default: the largest)")
    max_tokens: int | None = Field(default=None, description="threshold (default: the bank's)")
    max_turns: int | None = Field(default=None, description="threshold (default: the bank's)")

    def options(self) -> TestOptions:
        """Return the test's options, checked (InvalidInput: a 400 naming the problem)."""
        return TestOptions(
            prompt=self.compaction_prompt, max_tokens=self.max_tokens, max_turns=self.max_turns
        )


class PastedInput(PastedSource):
    """Entries pasted as JSON lines or `speaker: text` lines."""

    kind: Literal["pasted"]


class SyntheticInput(SyntheticSource):
    """Entries generated from a description, with planted facts (seeded, reproducible)."""

    kind: Literal["synthetic"]


class DraftTestRequest(Request):
    """A compaction prompt to try on pasted or synthetic entries (no bank needed)."""

    compaction_prompt: str
    source: PastedInput | SyntheticInput = Field(discriminator="kind")
    """`kind` says which: `pasted` (with `text`) or `synthetic` (with `description`)."""
    max_tokens: int | None = None
    max_turns: int | None = None

    def options(self) -> TestOptions:
        """Return the test's options, checked (InvalidInput: a 400 naming the problem)."""
        return TestOptions(
            prompt=self.compaction_prompt, max_tokens=self.max_tokens, max_turns=self.max_turns
        )

    def lab_source(self) -> PastedSource | SyntheticSource:
        """Return the source as the lab takes it."""
        if isinstance(self.source, PastedInput):
            return PastedSource(**self.source.model_dump())
        return SyntheticSource(**self.source.model_dump())


class Job(BaseModel):
    """Long work running in the server's pool: poll `status_url` until `succeeded` or `failed`."""

    id: str
    kind: str
    status: JobStatus
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    status_url: str
    result: Any = None
    """What the work returned, once it succeeded."""
    error: ErrorBody | None = None
    """Why it failed (the code and message the same call made directly would give)."""


def job_error(record: JobRecord) -> ErrorBody | None:
    """Return why a job failed, with the code the same call made directly would give."""
    if record.error is None:
        return None
    return ErrorBody(code=code_of(record.failure), message=record.error)


def job_out(record: JobRecord, status_url: str) -> Job:
    """Return the API view of a job."""
    error = job_error(record)
    result = record.result
    if isinstance(result, BaseModel):
        result = result.model_dump(mode="json")
    elif isinstance(result, list):
        result = [r.model_dump(mode="json") if isinstance(r, BaseModel) else r for r in result]
    return Job(
        id=record.id,
        kind=record.kind,
        status=record.status,
        created_at=record.created_at,
        started_at=record.started_at,
        finished_at=record.finished_at,
        status_url=status_url,
        result=result,
        error=error,
    )


ResourceExportCreate = exports.ExportRequest
"""An export to make (the request `memory.ops.exports` takes, as the REST body)."""


class ResourceExport(BaseModel):
    """An export job: poll `status_url`; once `succeeded`, fetch the file at `download_url`."""

    id: str
    resource_type: Literal["memory_bank"]
    resource_id: str
    format: ExportFormat
    status: JobStatus
    created_at: datetime
    finished_at: datetime | None = None
    entries: int | None = None
    bytes: int | None = None
    status_url: str
    download_url: str | None = None
    """Set once the file is ready."""
    error: ErrorBody | None = None


EXPORTS_PATH = "/authenticated/resource-exports"


def export_out(record: JobRecord) -> ResourceExport:
    """Return the API view of an export job (REST and MCP show the same)."""
    result = exports.result_of(record)
    base = f"{EXPORTS_PATH}/{record.id}"
    return ResourceExport(
        id=record.id,
        resource_type="memory_bank",
        resource_id=record.details["resource_id"],
        format=record.details["format"],
        status=record.status,
        created_at=record.created_at,
        finished_at=record.finished_at,
        entries=result.entries if result else None,
        bytes=result.bytes if result else None,
        status_url=base,
        download_url=f"{base}/download" if result else None,
        error=job_error(record),
    )
