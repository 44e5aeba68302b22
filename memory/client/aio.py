"""`AsyncClient`: the same methods as `Client`, awaited (lists are async iterators)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, overload

import httpx
from tenacity import AsyncRetrying

from memory.api.schemas import Job, ResourceExport
from memory.client import operations as op
from memory.client.calls import AsyncResource, Call, PageCall, async_op, async_pages, given, query
from memory.client.errors import JobTimeout, job_failure
from memory.client.polling import Poll, export_failure
from memory.client.transport import (
    Retries,
    base_headers,
    call_headers,
    checked,
    connection_failed,
    json_of,
    version_of,
)
from memory.retry import RetryPolicy
from memory.types.api_version import CURRENT_API_VERSION, ApiVersion

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


class _Runner:
    """Sends calls through one httpx async client with the client's headers and retries."""

    def __init__(self, http: httpx.AsyncClient, retries: Retries, sleep: Sleep) -> None:
        self.http = http
        self.retries = retries
        self.sleep = sleep

    async def send(
        self, call: Call[Any], handle: Any = None, *, params: dict[str, Any] | None = None
    ) -> Any:
        """Send `call` (retried as `Retries` says); return `await handle(response)` (default:
        the JSON body)."""
        headers = {**call_headers(call.write), **call.headers}
        body = call.json()
        query_params = query(call) if params is None else params

        async def attempt() -> Any:
            try:
                async with self.http.stream(
                    call.method, call.path, params=query_params, json=body, headers=headers
                ) as response:
                    if not response.is_success:
                        await response.aread()
                        checked(response)
                    if handle is None:
                        await response.aread()
                        return json_of(response)
                    return await handle(response)
            except httpx.TransportError as exc:
                raise connection_failed(exc, call.method, call.path) from exc

        retrying = AsyncRetrying(sleep=self.sleep, **self.retries.tenacity())
        return await retrying(attempt)

    async def run(self, call: Call[T]) -> T:
        """Return the result of one call."""
        return call.parse(await self.send(call))

    async def pages(self, call: PageCall[T]) -> AsyncIterator[T]:
        """Yield every item of a paged list, asking for the next page when one is used up."""
        params: dict[str, Any] | None = call.first()
        while params is not None:
            answer = await self.send(Call("GET", call.path, lambda a: a), params=params)
            for item in call.items(answer):
                yield item
            params = call.following(params, answer)


class Banks(AsyncResource):
    """`/memory_banks`: banks, their agents and stats, compaction and its tests."""

    list = async_pages(op.banks_list)
    templates = async_pages(op.banks_templates)
    create = async_op(op.banks_create)
    get = async_op(op.banks_get)
    update = async_op(op.banks_update)
    delete = async_op(op.banks_delete)
    delete_source = async_op(op.banks_delete_source)
    agents = async_pages(op.banks_agents)
    stats = async_op(op.banks_stats)
    compact = async_op(op.banks_compact)
    test_compaction = async_op(op.banks_test_compaction)
    test_compaction_draft = async_op(op.banks_test_compaction_draft)


class Entries(AsyncResource):
    """`/memory_banks/{bank_id}/entries`: write, load a thread, list by tag, get,
    forget."""

    write = async_op(op.entries_write)
    load = async_pages(op.entries_load)
    tagged = async_pages(op.entries_tagged)
    get = async_op(op.entries_get)
    forget = async_op(op.entries_forget)


class Assistant(AsyncResource):
    """`/memory_banks[/{bank_id}]/generate_memory_bank_config`: propose, then accept."""

    propose = async_op(op.assistant_propose)
    propose_for_bank = async_op(op.assistant_propose_for_bank)
    accept = async_op(op.assistant_accept)


class Users(AsyncResource):
    """`/users/{user_id}`: long-term memories, the end of a conversation, the wipe."""

    remember = async_op(op.users_remember)
    recall = async_op(op.users_recall)
    memories = async_pages(op.users_memories)
    forget = async_op(op.users_forget)
    end_conversation = async_op(op.users_end_conversation)
    wipe = async_op(op.users_wipe)


class Keys(AsyncResource):
    """`/keys`: the account's API keys (an admin key)."""

    create = async_op(op.keys_create)
    list = async_pages(op.keys_list)
    revoke = async_op(op.keys_revoke)


class _Waiting(AsyncResource):
    def __init__(self, runner: _Runner, poll: Poll, sleep: Sleep) -> None:
        super().__init__(runner)
        self._poll = poll
        self._sender = runner
        self._sleep = sleep


class Jobs(_Waiting):
    """`/jobs/{job_id}`: long work's status, and waiting for it."""

    get = async_op(op.jobs_get)

    async def wait(self, job: Job | str, *, timeout: float = 60.0) -> Job:
        """Return the job once it `succeeded` (see `Client.jobs.wait`).

        Raises:
            JobFailed: the job failed.
            JobTimeout: it was not done after `timeout` seconds.
        """
        job_id = job if isinstance(job, str) else job.id
        ticks = self._poll.ticks(timeout)
        while True:
            current = await self.get(job_id)
            if current.status == "succeeded":
                return current
            if current.status == "failed":
                raise job_failure(current)
            delay = next(ticks)
            if delay is None:
                raise JobTimeout(
                    f"job {job_id} still {current.status} after {timeout} s", job=current
                )
            await self._sleep(delay)


class Exports(_Waiting):
    """`/authenticated/resource-exports`: start, estimate, status, wait, download."""

    create = async_op(op.exports_create)
    estimate = async_op(op.exports_estimate)
    get = async_op(op.exports_get)

    async def wait(self, export: ResourceExport | str, *, timeout: float = 60.0) -> ResourceExport:
        """Return the export once it `succeeded`.

        Raises:
            JobFailed: the export failed.
            JobTimeout: it was not done after `timeout` seconds.
        """
        export_id = export if isinstance(export, str) else export.id
        ticks = self._poll.ticks(timeout)
        while True:
            current = await self.get(export_id)
            if current.status == "succeeded":
                return current
            if current.status == "failed":
                raise export_failure(current)
            delay = next(ticks)
            if delay is None:
                raise JobTimeout(
                    f"export {export_id} still {current.status} after {timeout} s", job=current
                )
            await self._sleep(delay)

    @overload
    async def download(self, export: ResourceExport | str) -> bytes: ...
    @overload
    async def download(self, export: ResourceExport | str, to: str | Path) -> Path: ...
    async def download(
        self, export: ResourceExport | str, to: str | Path | None = None
    ) -> bytes | Path:
        """Return a finished export's file, or write it to `to` and return that path.

        Raises:
            Conflict: the export has not succeeded (yet).
        """
        export_id = export if isinstance(export, str) else export.id
        call: Call[Any] = Call("GET", op.export_download_path(export_id), lambda a: a)
        runner = self._sender

        async def read(response: httpx.Response) -> bytes:
            return await response.aread()

        if to is None:
            return bytes(await runner.send(call, read))
        target = Path(to)

        async def save(response: httpx.Response) -> Path:
            with target.open("wb") as out:
                async for chunk in response.aiter_bytes():
                    out.write(chunk)
            return target

        return Path(await runner.send(call, save))


class AsyncClient(AsyncResource):
    """The membank REST API, async: `Client`'s arguments, plus `sleep` (an async sleep, for
    retry waits and job polling; tests pass a recording one)."""

    search = async_op(op.search)

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        version: str | ApiVersion | None = CURRENT_API_VERSION,
        retry: RetryPolicy | None = None,
        max_retry_after: float | None = None,
        timeout: float = 30.0,
        http: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.version = version_of(version)
        retries = Retries(**given(policy=retry, max_retry_after=max_retry_after))
        self._owned = http is None
        self._http = http or httpx.AsyncClient(base_url=base_url, timeout=timeout)
        self._http.headers.update(base_headers(api_key, self.version))
        self.base_url = str(self._http.base_url)
        runner = _Runner(self._http, retries, sleep)
        super().__init__(runner)
        poll = Poll(clock=retries.policy.clock)
        self.banks = Banks(runner)
        self.entries = Entries(runner)
        self.assistant = Assistant(runner)
        self.users = Users(runner)
        self.keys = Keys(runner)
        self.jobs = Jobs(runner, poll, sleep)
        self.exports = Exports(runner, poll, sleep)

    async def close(self) -> None:
        """Close the connections (an httpx client passed in is left open)."""
        if self._owned:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncClient({self.base_url!r}, version={self.version.label!r})"
