"""What the sync and async clients share about sending: headers, the retry rules, and how an
answer becomes a result or an error.

Retries (tenacity, with the numbers of a `memory.retry.RetryPolicy`): a 429, a 5xx or a
connection that failed is sent again (and a 409 with `Retry-After`: the same
`Idempotency-Key` still running elsewhere), at most `attempts` times in all. The wait before a
rerun is the answer's `Retry-After` when it has one, else the policy's exponential backoff.
A `Retry-After` longer than `max_retry_after` is not waited for: the error (`RateLimited`
with its `retry_after`) is raised at once, so the caller decides. A write carries one
`Idempotency-Key` (a uuid) on every attempt, so the server can store it once.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import httpx
from tenacity import RetryCallState, retry_if_exception, wait_exponential_jitter

from memory.api.versioning import HEADER as VERSION_HEADER
from memory.client.errors import (
    Conflict,
    ConnectionFailed,
    MembankError,
    RateLimited,
    ServerError,
    error_for,
)
from memory.retry import RetryPolicy
from memory.types.api_version import ApiVersion

KEY_HEADER = "X-API-Key"
IDEMPOTENCY_HEADER = "Idempotency-Key"
USER_AGENT = "membank-python-client/1"
DEFAULT_RETRY = RetryPolicy(
    attempts=4, backoff_seconds=0.5, max_wait_seconds=8.0, jitter_seconds=0.2
)
"""Four attempts in all; 0.5, 1, 2 s (plus up to 0.2 s jitter) between them unless the
server says `Retry-After`."""
DEFAULT_MAX_RETRY_AFTER = 60.0


def version_of(version: str | ApiVersion | None) -> ApiVersion:
    """Return the API version to ask for (None: unversioned, the server's legacy behaviour).

    Raises:
        InvalidInput: not a YYYY-MM-DD date (memory.errors.InvalidInput).
    """
    if isinstance(version, ApiVersion):
        return version
    return ApiVersion.parse(version)


def base_headers(api_key: str | None, version: ApiVersion) -> dict[str, str]:
    """Return the headers every request sends: the key, the version (if any), the agent."""
    headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
    if api_key is not None:
        headers[KEY_HEADER] = api_key
    if version.asked is not None:
        headers[VERSION_HEADER] = version.asked.isoformat()
    return headers


def call_headers(write: bool) -> dict[str, str]:
    """Return the headers of one logical call (the same on each of its attempts)."""
    return {IDEMPOTENCY_HEADER: uuid.uuid4().hex} if write else {}


def retriable(exc: BaseException) -> bool:
    """Return True for a failure worth sending again: 429, 5xx, no connection, and a 409
    with `Retry-After` (the call's `Idempotency-Key` is still running elsewhere)."""
    if isinstance(exc, Conflict):
        return exc.retry_after is not None
    return isinstance(exc, RateLimited | ServerError | ConnectionFailed)


def connection_failed(exc: httpx.TransportError, method: str, path: str) -> ConnectionFailed:
    """Return the client error of a request that got no answer."""
    return ConnectionFailed(
        f"{method} {path} got no answer: {type(exc).__name__}: {exc}", code="connection_failed"
    )


def checked(response: httpx.Response) -> httpx.Response:
    """Return a 2xx response; raise the error an error response stands for (its body read)."""
    if response.is_success:
        return response
    raise error_for(response)


def json_of(response: httpx.Response) -> Any:
    """Return a response's JSON body (read).

    Raises:
        MembankError: the answer is not JSON (not a membank server, or a proxy's page).
    """
    try:
        return response.json()
    except ValueError as exc:
        raise MembankError(
            f"the answer to {response.request.method} {response.request.url.path} is not JSON "
            f"(HTTP {response.status_code}): is {response.request.url.host} a membank server?",
            status=response.status_code,
            code="bad_response",
        ) from exc


@dataclass(frozen=True)
class Retries:
    """The retry rules of a client: a policy's numbers, `Retry-After` first."""

    policy: RetryPolicy = DEFAULT_RETRY
    max_retry_after: float = DEFAULT_MAX_RETRY_AFTER

    def tenacity(self) -> dict[str, Any]:
        """Return the keyword arguments of tenacity's `Retrying`/`AsyncRetrying` (but `sleep`)."""
        policy = self.policy
        backoff = wait_exponential_jitter(
            multiplier=policy.backoff_seconds,
            max=policy.max_wait_seconds,
            jitter=policy.jitter_seconds,
        )
        started = policy.clock()

        def told(state: RetryCallState) -> float | None:
            exc = state.outcome.exception() if state.outcome else None
            return getattr(exc, "retry_after", None)

        def wait(state: RetryCallState) -> float:
            after = told(state)
            return float(backoff(state)) if after is None else after

        def stop(state: RetryCallState) -> bool:
            after = told(state)
            if after is not None and after > self.max_retry_after:
                return True
            if policy.attempts is not None and state.attempt_number >= policy.attempts:
                return True
            total = policy.max_total_seconds
            return total is not None and policy.clock() - started >= total

        return {
            "stop": stop,
            "wait": wait,
            "retry": retry_if_exception(retriable),
            "reraise": True,
        }
