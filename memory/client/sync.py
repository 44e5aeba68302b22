"""`Client`: the REST API from Python, blocking (httpx). See `memory.client` for an example."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, overload

import httpx
from tenacity import Retrying

from memory.api.schemas import Job, ResourceExport
from memory.client import operations as op
from memory.client.calls import Call, PageCall, SyncResource, given, query, sync_op, sync_pages
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


class _Runner:
    """Sends calls through one httpx client with the client's headers and retries."""

    def __init__(self, http: httpx.Client, retries: Retries) -> None:
        self.http = http
        self.retries = retries

    def send(
        self, call: Call[Any], handle: Any = None, *, params: dict[str, Any] | None = None
    ) -> Any:
        """Send `call` (retried as `Retries` says); return `handle(response)` of its answer
        (default: the JSON body), the response streamed so a download is not held in memory."""
        headers = {**call_headers(call.write), **call.headers}
        body = call.json()
        query_params = query(call) if params is None else params

        def attempt() -> Any:
            try:
                with self.http.stream(
                    call.method, call.path, params=query_params, json=body, headers=headers
                ) as response:
                    if not response.is_success:
                        response.read()
                        checked(response)
                    if handle is None:
                        response.read()
                        return json_of(response)
                    return handle(response)
            except httpx.TransportError as exc:
                raise connection_failed(exc, call.method, call.path) from exc

        retrying = Retrying(sleep=self.retries.policy.sleep, **self.retries.tenacity())
        return retrying(attempt)

    def run(self, call: Call[T]) -> T:
        """Return the result of one call."""
        return call.parse(self.send(call))

    def pages(self, call: PageCall[T]) -> Iterator[T]:
        """Yield every item of a paged list, asking for the next page when one is used up."""
        params: dict[str, Any] | None = call.first()
        while params is not None:
            answer = self.send(Call("GET", call.path, lambda a: a), params=params)
            yield from call.items(answer)
            params = call.following(params, answer)


class Banks(SyncResource):
    """`/memory_banks`: banks, their agents and stats, compaction and its tests."""

    list = sync_pages(op.banks_list)
    templates = sync_pages(op.banks_templates)
    create = sync_op(op.banks_create)
    get = sync_op(op.banks_get)
    update = sync_op(op.banks_update)
    delete = sync_op(op.banks_delete)
    delete_source = sync_op(op.banks_delete_source)
    agents = sync_pages(op.banks_agents)
    stats = sync_op(op.banks_stats)
    compact = sync_op(op.banks_compact)
    test_compaction = sync_op(op.banks_test_compaction)
    test_compaction_draft = sync_op(op.banks_test_compaction_draft)


class Entries(SyncResource):
    """`/memory_banks/{bank_id}/entries`: write, load a thread, list by tag, get,
    forget."""

    write = sync_op(op.entries_write)
    load = sync_pages(op.entries_load)
    tagged = sync_pages(op.entries_tagged)
    get = sync_op(op.entries_get)
    forget = sync_op(op.entries_forget)


class Assistant(SyncResource):
    """`/memory_banks[/{bank_id}]/generate_memory_bank_config`: propose, then accept."""

    propose = sync_op(op.assistant_propose)
    propose_for_bank = sync_op(op.assistant_propose_for_bank)
    accept = sync_op(op.assistant_accept)


class Users(SyncResource):
    """`/users/{user_id}`: long-term memories, the end of a conversation, the wipe."""

    remember = sync_op(op.users_remember)
    recall = sync_op(op.users_recall)
    memories = sync_pages(op.users_memories)
    forget = sync_op(op.users_forget)
    end_conversation = sync_op(op.users_end_conversation)
    wipe = sync_op(op.users_wipe)


class Keys(SyncResource):
    """`/keys`: the account's API keys (an admin key)."""

    create = sync_op(op.keys_create)
    list = sync_pages(op.keys_list)
    revoke = sync_op(op.keys_revoke)


class _Waiting(SyncResource):
    def __init__(self, runner: _Runner, poll: Poll, sleep: Callable[[float], None]) -> None:
        super().__init__(runner)
        self._poll = poll
        self._sender = runner
        self._sleep = sleep


class Jobs(_Waiting):
    """`/jobs/{job_id}`: long work's status, and waiting for it."""

    get = sync_op(op.jobs_get)

    def wait(self, job: Job | str, *, timeout: float = 60.0) -> Job:
        """Return the job once it `succeeded`, polling its status.

        Raises:
            JobFailed: the job failed (`code`: the failure's, as the direct call gives it).
            JobTimeout: it was not done after `timeout` seconds (it goes on on the server).
        """
        job_id = job if isinstance(job, str) else job.id
        ticks = self._poll.ticks(timeout)
        while True:
            current = self.get(job_id)
            if current.status == "succeeded":
                return current
            if current.status == "failed":
                raise job_failure(current)
            delay = next(ticks)
            if delay is None:
                raise JobTimeout(
                    f"job {job_id} still {current.status} after {timeout} s", job=current
                )
            self._sleep(delay)


class Exports(_Waiting):
    """`/authenticated/resource-exports`: start, estimate, status, wait, download."""

    create = sync_op(op.exports_create)
    estimate = sync_op(op.exports_estimate)
    get = sync_op(op.exports_get)

    def wait(self, export: ResourceExport | str, *, timeout: float = 60.0) -> ResourceExport:
        """Return the export once it `succeeded` (its file ready to download).

        Raises:
            JobFailed: the export failed.
            JobTimeout: it was not done after `timeout` seconds.
        """
        export_id = export if isinstance(export, str) else export.id
        ticks = self._poll.ticks(timeout)
        while True:
            current = self.get(export_id)
            if current.status == "succeeded":
                return current
            if current.status == "failed":
                raise export_failure(current)
            delay = next(ticks)
            if delay is None:
                raise JobTimeout(
                    f"export {export_id} still {current.status} after {timeout} s", job=current
                )
            self._sleep(delay)

    @overload
    def download(self, export: ResourceExport | str) -> bytes: ...
    @overload
    def download(self, export: ResourceExport | str, to: str | Path) -> Path: ...
    def download(self, export: ResourceExport | str, to: str | Path | None = None) -> bytes | Path:
        """Return a finished export's file (JSON or Parquet bytes), or write it to `to`
        (streamed) and return that path.

        Raises:
            Conflict: the export has not succeeded (yet).
        """
        export_id = export if isinstance(export, str) else export.id
        call: Call[Any] = Call("GET", op.export_download_path(export_id), lambda a: a)
        runner = self._sender
        if to is None:
            return bytes(runner.send(call, lambda r: r.read()))
        target = Path(to)

        def save(response: httpx.Response) -> Path:
            with target.open("wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
            return target

        return Path(runner.send(call, save))


class Client(SyncResource):
    """The membank REST API, blocking.

    Args:
        base_url: the server, e.g. `http://127.0.0.1:8000`.
        api_key: sent as `X-API-Key` (None: none, every call is Unauthorized).
        version: the `Seclai-Version` every request sends (default the current one,
            2026-08-03; None: no header, the legacy behaviour). Set once, here.
        retry: attempts and backoff for 429, 5xx and lost connections (its `sleep` and
            `clock` are also what job waiting uses; tests pass recording ones).
        max_retry_after: a `Retry-After` longer than this (seconds) is raised, not waited.
        timeout: seconds per request.
        http: an httpx client to send with (its base URL is used; default: one of its own).
    """

    search = sync_op(op.search)

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        version: str | ApiVersion | None = CURRENT_API_VERSION,
        retry: RetryPolicy | None = None,
        max_retry_after: float | None = None,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        self.version = version_of(version)
        retries = Retries(**given(policy=retry, max_retry_after=max_retry_after))
        self._owned = http is None
        self._http = http or httpx.Client(base_url=base_url, timeout=timeout)
        self._http.headers.update(base_headers(api_key, self.version))
        self.base_url = str(self._http.base_url)
        runner = _Runner(self._http, retries)
        super().__init__(runner)
        poll, sleep = Poll(clock=retries.policy.clock), retries.policy.sleep
        self.banks = Banks(runner)
        self.entries = Entries(runner)
        self.assistant = Assistant(runner)
        self.users = Users(runner)
        self.keys = Keys(runner)
        self.jobs = Jobs(runner, poll, sleep)
        self.exports = Exports(runner, poll, sleep)

    def close(self) -> None:
        """Close the connections (an httpx client passed in is left open)."""
        if self._owned:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}, version={self.version.label!r})"
