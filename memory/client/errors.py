"""The client's errors: one per kind of JSON error envelope (`{"error": {"code", "message"}}`).

Each also derives from the core exception of the same kind (`memory.errors`), so code that
catches `memory.errors.NotFound` around an in-process call catches the remote one too.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from memory import errors as core
from memory.api.schemas import Job

REQUEST_ID = "X-Request-ID"


class MembankError(core.MembankError):
    """A request the server refused or could not serve.

    Attributes:
        status: the HTTP status (None: no response, e.g. the server could not be reached).
        code: the envelope's stable code (`not_found`, `invalid_input`, ...).
        message: the envelope's message: what went wrong and how to fix it.
        request_id: the response's `X-Request-ID` (ties it to the server's log).
        retry_after: the response's `Retry-After` in seconds (None: it had none).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str = "error",
        request_id: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = f" (HTTP {self.status}, {self.code})" if self.status else f" ({self.code})"
        return f"{self.message}{where}"


class InvalidInput(MembankError, core.InvalidInput):
    """400 bad input, 413 too large, 415, 422 request shape; or a request the client's own
    check (the server's model) refused before sending."""


class Unauthorized(MembankError):
    """401: no API key, or an unknown or revoked one."""


class Forbidden(MembankError):
    """403: the key may not do this (its scopes or banks)."""


class NotFound(MembankError, core.NotFound):
    """404: no such bank, entry, job, export or memory in the key's account."""


class Conflict(MembankError, core.Conflict):
    """409 (a `type`/`mode` change, an export not finished; with `retry_after`: the same
    `Idempotency-Key` is still running elsewhere) or 412 (an `If-Match` mismatch)."""


class RateLimited(MembankError):
    """429: too many requests or jobs; `retry_after` is the server's wait in seconds."""


class ServerError(MembankError):
    """5xx: a model provider (502) or storage (503) failure, or an unexpected one (500)."""


class ConnectionFailed(MembankError):
    """The server could not be reached, or the connection broke before an answer."""


class JobFailed(MembankError):
    """A job (or export) ended `failed`; `job` is its last status, `code` the failure's code."""

    def __init__(self, message: str, *, job: Any, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.job = job


class JobTimeout(MembankError, TimeoutError):
    """A job (or export) was still not done when the wait ran out; `job` is its last status
    (the work goes on on the server: wait again, or poll `client.jobs.get`)."""

    def __init__(self, message: str, *, job: Any) -> None:
        super().__init__(message, code="timeout")
        self.job = job


_BY_STATUS: dict[int, type[MembankError]] = {
    400: InvalidInput,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: Conflict,
    413: InvalidInput,
    415: InvalidInput,
    422: InvalidInput,
    429: RateLimited,
}


def retry_after(response: httpx.Response, now: datetime | None = None) -> float | None:
    """Return the response's `Retry-After` in seconds (delta seconds or an HTTP date;
    None: absent or unreadable)."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def error_for(response: httpx.Response) -> MembankError:
    """Return the error a non-2xx response stands for (its envelope's code and message)."""
    status = response.status_code
    code, message = _envelope(response)
    kind = _BY_STATUS.get(status, ServerError if status >= 500 else MembankError)
    rid = response.headers.get(REQUEST_ID, "")
    after = retry_after(response)
    return kind(message, status=status, code=code, request_id=rid, retry_after=after)


def job_failure(job: Job) -> JobFailed:
    """Return the error of a failed job, with the code the same call made directly gives."""
    code = job.error.code if job.error else "failed"
    why = job.error.message if job.error else "no reason given"
    return JobFailed(f"job {job.id} ({job.kind}) failed: {why}", job=job, code=code)


def _envelope(response: httpx.Response) -> tuple[str, str]:
    fallback = f"HTTP {response.status_code} {response.reason_phrase}".strip()
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return "error", response.text[:200] or fallback
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("code", "error")), str(error.get("message", fallback))
    return "error", fallback
