"""The JSON error envelope `{"error": {"code", "message"}}` and the HTTP status and code of
each core error (`KINDS`), read by the REST handlers (`memory.api.errors`), failed jobs and
the MCP tool errors alike."""

from __future__ import annotations

from pydantic import BaseModel

from memory.errors import (
    Conflict,
    InvalidInput,
    MembankError,
    NotFound,
    ProviderError,
    StorageError,
)
from memory.ops.jobs import TooManyJobs


class ErrorBody(BaseModel):
    """What went wrong: a stable code and a message saying how to fix it."""

    code: str
    message: str


class ErrorResponse(BaseModel):
    """Every error response."""

    error: ErrorBody


STATUS_CODES = {
    400: "invalid_input",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    412: "precondition_failed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
    500: "internal_error",
    502: "provider_error",
    503: "storage_error",
}

KINDS: list[tuple[type[MembankError], int, str]] = [
    (InvalidInput, 400, "invalid input: {}"),
    (NotFound, 404, "not found: {}"),
    (Conflict, 409, "conflict: {}"),
    (TooManyJobs, 429, "too many jobs: {}"),
    (ProviderError, 502, "model provider failed: {} (retry later)"),
    (StorageError, 503, "failed: {}"),
]
"""Each core error: its HTTP status, and how an MCP tool error tells it (`{}`: the message)."""


def kind_of(exc: MembankError) -> tuple[int, str]:
    """Return a core exception's HTTP status and how a tool error tells it."""
    for kind, status, told in KINDS:
        if isinstance(exc, kind):
            return status, told
    return 500, "failed: {}"


def status_of(exc: MembankError) -> int:
    """Return the HTTP status of a core exception."""
    return kind_of(exc)[0]


def code_of(exc: MembankError | None) -> str:
    """Return the error code of a core exception (None: an unexpected failure)."""
    return "internal_error" if exc is None else STATUS_CODES.get(status_of(exc), "internal_error")
