"""Retries, Retry-After, idempotency keys, error mapping, cursor pages and job time-outs,
against a scripted local HTTP server (what a healthy membank server does not do on demand).
The waits are recorded by an injected sleep, never taken."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from stub_server import Reply, Stub, error, stub_server

from memory import errors as core
from memory.api.schemas import Job
from memory.client import (
    AsyncClient,
    Client,
    Conflict,
    ConnectionFailed,
    Forbidden,
    InvalidInput,
    JobFailed,
    JobTimeout,
    MembankError,
    RateLimited,
    RetryPolicy,
    ServerError,
)
from memory.client.errors import retry_after
from memory.models import Bank

pytestmark = pytest.mark.server

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
BANK = Bank(
    id="b1",
    account="acme",
    name="support",
    type="conversation",
    mode="balanced",
    created_at=NOW,
    updated_at=NOW,
).model_dump(mode="json")


def job(status: str, **fields: object) -> dict[str, object]:
    made = Job(id="j1", kind="compact", status=status, created_at=NOW, status_url="/jobs/j1")
    return {**made.model_dump(mode="json"), **fields}


class Recorder:
    """A sleep that records each wait and moves a fake clock by it."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)

    def clock(self) -> float:
        return self.now

    def policy(self, attempts: int = 4, **fields: float) -> RetryPolicy:
        return RetryPolicy(attempts=attempts, sleep=self.sleep, clock=self.clock, **fields)


@contextmanager
def talking(*script: Reply, **options: Any) -> Iterator[tuple[Stub, Client]]:
    """A stub serving `script` and a client of it (`options`: the Client's)."""
    with stub_server(*script) as stub, Client(stub.url, "k", **options) as client:
        yield stub, client


def test_a_429_is_retried_after_exactly_the_retry_after_it_names() -> None:
    waits = Recorder()
    script = (
        error(429, "too_many_requests", "slow down", **{"Retry-After": "2"}),
        Reply(201, BANK),
    )
    with talking(*script, retry=waits.policy()) as (stub, client):
        made = client.banks.create("support", type="conversation")
    assert made.id == "b1"
    assert len(stub.seen) == 2 and waits.waits == [2.0]
    keys = [s.headers.get("idempotency-key") for s in stub.seen]
    assert keys[0] and keys[0] == keys[1]  # one key for the call, reused by its retry
    assert stub.seen[0].body == {"name": "support", "type": "conversation"}


def test_each_write_has_its_own_idempotency_key_and_reads_send_none() -> None:
    with talking(Reply(201, BANK)) as (stub, client):
        client.banks.create("a")
        client.banks.create("b")
        client.banks.get("b1")
    first, second, read = (s.headers.get("idempotency-key") for s in stub.seen)
    assert first and second and first != second
    assert read is None


def test_when_every_attempt_is_refused_the_rate_limit_is_raised_with_its_delay() -> None:
    waits = Recorder()
    refused = error(429, "too_many_requests", "too many jobs", **{"Retry-After": "1"})
    with (
        talking(refused, retry=waits.policy(attempts=3)) as (stub, client),
        pytest.raises(RateLimited) as raised,
    ):
        client.banks.compact("b1")
    assert raised.value.retry_after == 1.0 and raised.value.status == 429
    assert raised.value.code == "too_many_requests" and "too many jobs" in str(raised.value)
    assert len(stub.seen) == 3 and waits.waits == [1.0, 1.0]


def test_a_retry_after_longer_than_the_client_waits_is_raised_at_once() -> None:
    waits = Recorder()
    later = error(429, "too_many_requests", "later", **{"Retry-After": "120"})
    with (
        talking(later, retry=waits.policy(), max_retry_after=60) as (stub, client),
        pytest.raises(RateLimited) as raised,
    ):
        client.banks.get("b1")
    assert raised.value.retry_after == 120.0
    assert len(stub.seen) == 1 and waits.waits == []


def test_a_5xx_without_retry_after_backs_off_then_succeeds() -> None:
    waits = Recorder()
    script = (
        error(503, "storage_error", "busy"),
        error(502, "provider_error", "x"),
        Reply(200, BANK),
    )
    policy = waits.policy(backoff_seconds=0.5, max_wait_seconds=8.0)
    with talking(*script, retry=policy) as (stub, client):
        assert client.banks.get("b1").name == "support"
    assert len(stub.seen) == 3 and waits.waits == [0.5, 1.0]


def test_a_5xx_that_stays_is_a_server_error() -> None:
    waits = Recorder()
    with (
        talking(Reply(500, None), retry=waits.policy(attempts=2)) as (stub, client),
        pytest.raises(ServerError) as raised,
    ):
        client.banks.get("b1")
    assert raised.value.status == 500 and len(stub.seen) == 2


def test_refusals_are_not_retried_and_map_to_their_kind() -> None:
    waits = Recorder()
    script = (
        error(403, "forbidden", "this key may only read", **{"X-Request-ID": "rid-1"}),
        error(412, "precondition_failed", "If-Match differs"),
        error(422, "invalid_request", "body field 'x' is not a field here"),
    )
    with talking(*script, retry=waits.policy()) as (stub, client):
        with pytest.raises(Forbidden) as forbidden:
            client.banks.delete("b1")
        with pytest.raises(Conflict):
            client.banks.update("b1", name="x")
        with pytest.raises(InvalidInput) as shape:
            client.banks.get("b1")
    assert forbidden.value.request_id == "rid-1" and forbidden.value.code == "forbidden"
    assert forbidden.value.message == "this key may only read"
    assert isinstance(shape.value, core.InvalidInput) and shape.value.code == "invalid_request"
    assert len(stub.seen) == 3 and waits.waits == []


def test_a_conflict_with_retry_after_is_the_same_write_still_running_and_is_retried() -> None:
    waits = Recorder()
    running = error(
        409, "conflict", "this Idempotency-Key is still running", **{"Retry-After": "1"}
    )
    with talking(running, Reply(201, BANK), retry=waits.policy()) as (stub, client):
        assert client.banks.create("support").id == "b1"
    assert waits.waits == [1.0]
    assert stub.seen[0].headers["idempotency-key"] == stub.seen[1].headers["idempotency-key"]


def test_if_match_is_sent_on_the_changes_that_take_it() -> None:
    reset = {"id": "b1", "source_reset": True}
    script = (Reply(200, BANK), Reply(200, reset), Reply(200, {"id": "b1", "deleted": True}))
    with talking(*script) as (stub, client):
        client.banks.update("b1", name="x", if_match='"abc"')
        client.banks.delete_source("b1", if_match='"abc"')
        client.banks.delete("b1")
    assert [s.headers.get("if-match") for s in stub.seen] == ['"abc"', '"abc"', None]
    assert stub.seen[0].body == {"name": "x"}


def test_a_download_before_the_export_is_done_is_a_conflict() -> None:
    busy = error(409, "conflict", "export e1 is running: wait for it")
    with talking(busy) as (stub, client), pytest.raises(Conflict) as raised:
        client.exports.download("e1")
    assert raised.value.status == 409 and stub.seen[0].path.endswith("/e1/download")


def test_an_answer_that_is_not_json_says_so() -> None:
    with talking(Reply(200, None)) as (_, client), pytest.raises(MembankError) as raised:
        client.banks.get("b1")
    assert raised.value.code == "bad_response" and "membank server" in raised.value.message


def test_no_server_is_a_connection_failure_after_the_attempts() -> None:
    waits = Recorder()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again below: nothing listens there
    nowhere = Client(f"http://127.0.0.1:{port}", "k", retry=waits.policy(attempts=3))
    with nowhere as client, pytest.raises(ConnectionFailed) as raised:
        client.banks.get("b1")
    assert raised.value.status is None and len(waits.waits) == 2


def test_retry_after_as_an_http_date() -> None:
    later = format_datetime(NOW + timedelta(seconds=30), usegmt=True)
    response = httpx.Response(429, headers={"Retry-After": later})
    assert retry_after(response, now=NOW) == 30.0
    assert retry_after(httpx.Response(429, headers={"Retry-After": "soon"})) is None
    assert retry_after(httpx.Response(429)) is None


def test_pages_follow_next_cursor_when_the_answer_has_one() -> None:
    first = {
        "data": [BANK, BANK],
        "total": 3,
        "limit": 2,
        "offset": 0,
        "next_offset": 2,
        "next_cursor": "c2",
    }
    last = {
        "data": [BANK],
        "total": 3,
        "limit": 2,
        "offset": 0,
        "next_offset": None,
        "next_cursor": None,
    }
    with talking(Reply(200, first), Reply(200, last)) as (stub, client):
        found = list(client.banks.list(type="conversation", page_size=2))
    assert len(found) == 3
    assert stub.seen[0].query == {"type": ["conversation"], "limit": ["2"]}
    assert stub.seen[1].query == {"type": ["conversation"], "limit": ["2"], "cursor": ["c2"]}


def test_a_job_that_does_not_finish_in_time_is_a_timeout_with_its_last_status() -> None:
    waits = Recorder()
    with (
        talking(Reply(200, job("running")), retry=waits.policy()) as (stub, client),
        pytest.raises(JobTimeout) as raised,
    ):
        client.jobs.wait("j1", timeout=5)
    assert isinstance(raised.value, TimeoutError) and raised.value.job.status == "running"
    assert sum(waits.waits) == pytest.approx(5.0) and len(stub.seen) == len(waits.waits) + 1


def test_a_failed_job_raises_with_the_failure_code() -> None:
    failed = job("failed", error={"code": "provider_error", "message": "the model is down"})
    script = (Reply(200, job("queued")), Reply(200, failed))
    with (
        talking(*script, retry=Recorder().policy()) as (_, client),
        pytest.raises(JobFailed) as raised,
    ):
        client.jobs.wait("j1")
    assert raised.value.code == "provider_error" and "the model is down" in str(raised.value)


def test_the_version_header_is_set_once_on_the_client() -> None:
    with stub_server(Reply(200, BANK)) as stub:
        with Client(stub.url, "k") as current, Client(stub.url, "k", version=None) as legacy:
            current.banks.get("b1")
            legacy.banks.get("b1")
        with Client(stub.url, "k", version="2026-09-01") as dated:
            dated.banks.get("b1")
    sent = [s.headers.get("seclai-version") for s in stub.seen]
    assert sent == ["2026-08-03", None, "2026-09-01"]
    assert stub.seen[0].headers["x-api-key"] == "k"
    with pytest.raises(core.InvalidInput, match="YYYY-MM-DD"):
        Client(stub.url, "k", version="next week")


def test_keys_calls_send_what_the_key_api_takes() -> None:
    created = {"key_id": "k2", "key": "mbk_x", "account": "acme", "created_at": NOW.isoformat()}
    listed = {
        "data": [{**created, "key": None}],
        "total": 1,
        "limit": 100,
        "offset": 0,
        "next_offset": None,
    }
    revoked = {**created, "revoked_at": NOW.isoformat()}
    with talking(Reply(201, created), Reply(200, listed), Reply(200, revoked)) as (stub, client):
        new = client.keys.create(scopes=["read"], banks=["b1"])
        keys = list(client.keys.list())
        gone = client.keys.revoke("k2")
    assert new.key == "mbk_x" and [k.key_id for k in keys] == ["k2"] and not gone.active
    assert [(s.method, s.path) for s in stub.seen] == [
        ("POST", "/keys"),
        ("GET", "/keys"),
        ("DELETE", "/keys/k2"),
    ]
    assert stub.seen[0].body == {"scopes": ["read"], "banks": ["b1"]}


def test_the_async_client_retries_the_same_way() -> None:
    waits = Recorder()

    async def run(url: str) -> Bank:
        async with AsyncClient(url, "k", retry=waits.policy(), sleep=waits.asleep) as client:
            return await client.banks.create("support")

    script = (
        error(429, "too_many_requests", "slow down", **{"Retry-After": "3"}),
        Reply(201, BANK),
    )
    with stub_server(*script) as stub:
        made = asyncio.run(run(stub.url))
    assert made.id == "b1" and waits.waits == [3.0] and len(stub.seen) == 2
    assert stub.seen[0].headers["idempotency-key"] == stub.seen[1].headers["idempotency-key"]
