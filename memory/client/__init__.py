"""The membank REST API from Python: `Client` (blocking) and `AsyncClient`, on httpx.

    from memory.client import Client

    with Client("http://127.0.0.1:8000", api_key="mbk_...") as client:
        bank = client.banks.create("support", type="conversation", mode="balanced")
        client.entries.write(bank.id, key="c1", speaker="Dana", content="The tank cracked.")
        for hit in client.search(bank.id, text="cracked tank"):
            print(hit.score, hit.entry.content)

Resources follow the REST paths (`client.banks`, `client.entries`, `client.exports`,
`client.jobs`, `client.users`, `client.assistant`, `client.keys`; `client.search`); each
method is one operation and takes and returns the server's own pydantic models. Lists are
iterators that fetch page after page. Errors are `MembankError`s by kind (`NotFound`,
`InvalidInput`, `RateLimited` with `retry_after`, ...); 429, 5xx and lost connections are
retried (honouring `Retry-After`), writes with one `Idempotency-Key` across their retries.
"""

from memory.client.aio import AsyncClient
from memory.client.errors import (
    Conflict,
    ConnectionFailed,
    Forbidden,
    InvalidInput,
    JobFailed,
    JobTimeout,
    MembankError,
    NotFound,
    RateLimited,
    ServerError,
    Unauthorized,
)
from memory.client.sync import Client
from memory.retry import RetryPolicy

__all__ = [
    "AsyncClient",
    "Client",
    "Conflict",
    "ConnectionFailed",
    "Forbidden",
    "InvalidInput",
    "JobFailed",
    "JobTimeout",
    "MembankError",
    "NotFound",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "Unauthorized",
]
