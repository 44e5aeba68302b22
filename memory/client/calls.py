"""What one client method sends and how its answer is read, for the sync and async clients
alike: a `Call` (one request), a `PageCall` (a paged list), and `sync_op`/`async_op`, the
descriptors that make a builder function a method of a resource.

A builder (`memory.client.operations`) checks its arguments with the server's own request
model, so bad input fails before anything is sent, with the message the server would give.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, overload

from pydantic import BaseModel, ValidationError

from memory import errors as core
from memory.client.errors import InvalidInput
from memory.types.problems import one_line

P = ParamSpec("P")
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request: method, path, query, JSON body, how to read the answer.

    Attributes:
        write: a write or a job-starting call; it carries an `Idempotency-Key` (one uuid per
            call, the same on each of its retries), so a retried write is stored once.
        headers: the call's own headers (`If-Match`).
    """

    method: str
    path: str
    parse: Callable[[Any], T]
    params: Mapping[str, Any] = field(default_factory=dict)
    body: BaseModel | dict[str, Any] | None = None
    write: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        """Return the body as JSON data: the fields that were set (an explicit null counts)."""
        if isinstance(self.body, BaseModel):
            return self.body.model_dump(mode="json", exclude_unset=True)
        return self.body


@dataclass(frozen=True)
class PageCall(Generic[T]):
    """A paged list: GET `path` page after page, `page_size` items a page.

    The next page is asked for with the answer's `next_cursor` when it has one (`?cursor=`),
    else with its `next_offset` (`?offset=`); a page with neither is the last.
    """

    path: str
    item: Callable[[Any], T]
    params: Mapping[str, Any] = field(default_factory=dict)
    page_size: int = 100

    def first(self) -> dict[str, Any]:
        """Return the query of the first page."""
        return {**_query(self.params), "limit": self.page_size}

    def following(self, asked: dict[str, Any], answer: Any) -> dict[str, Any] | None:
        """Return the query of the page after `answer` (None: it was the last)."""
        cursor = answer.get("next_cursor") if isinstance(answer, dict) else None
        if cursor:
            return {**{k: v for k, v in asked.items() if k != "offset"}, "cursor": cursor}
        offset = answer.get("next_offset") if isinstance(answer, dict) else None
        if offset is None:
            return None
        return {**asked, "offset": offset}

    def items(self, answer: Any) -> list[T]:
        """Return the items of one page."""
        return [self.item(row) for row in answer.get("data", [])]


def model(cls: type[M], /, **fields: Any) -> M:
    """Return `cls(**fields)` checked by the server's model (unset fields stay unset).

    Raises:
        InvalidInput: a field is wrong; nothing is sent.
    """
    try:
        return cls(**fields)
    except ValidationError as exc:
        raise InvalidInput(one_line(exc, cls.__name__), code="invalid_request") from exc
    except core.InvalidInput as exc:  # a field rule (memory.types.fields) said why
        raise InvalidInput(str(exc), code="invalid_input") from exc


def given(**fields: Any) -> dict[str, Any]:
    """Return the fields that are not None (the server's default stands for the others)."""
    return {k: v for k, v in fields.items() if v is not None}


def _query(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in params.items()}


def query(call: Call[Any]) -> dict[str, Any]:
    """Return a call's query parameters, dates as ISO text, None left out."""
    return _query({k: v for k, v in call.params.items() if v is not None})


class SyncRunner(Protocol):
    """What runs calls for the sync client."""

    def run(self, call: Call[T]) -> T: ...

    def pages(self, call: PageCall[T]) -> Iterator[T]: ...


class AsyncRunner(Protocol):
    """What runs calls for the async client."""

    async def run(self, call: Call[T]) -> T: ...

    def pages(self, call: PageCall[T]) -> AsyncIterator[T]: ...


class SyncResource:
    """A group of sync methods (`client.banks`, ...) over the client's runner."""

    def __init__(self, runner: SyncRunner) -> None:
        self._runner = runner


class AsyncResource:
    """A group of async methods (`client.banks`, ...) over the client's runner."""

    def __init__(self, runner: AsyncRunner) -> None:
        self._runner = runner


class sync_op(Generic[P, T]):
    """A method of a sync resource: runs the call its builder makes and returns the result."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> sync_op[P, T]: ...
    @overload
    def __get__(self, obj: SyncResource, owner: type[Any]) -> Callable[P, T]: ...
    def __get__(self, obj: SyncResource | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        runner, build = obj._runner, self.build

        @functools.wraps(build)
        def method(*args: P.args, **kwargs: P.kwargs) -> T:
            return runner.run(build(*args, **kwargs))

        return method


class async_op(Generic[P, T]):
    """A method of an async resource: awaits the call its builder makes."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> async_op[P, T]: ...
    @overload
    def __get__(self, obj: AsyncResource, owner: type[Any]) -> Callable[P, Awaitable[T]]: ...
    def __get__(self, obj: AsyncResource | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        runner, build = obj._runner, self.build

        @functools.wraps(build)
        async def method(*args: P.args, **kwargs: P.kwargs) -> T:
            return await runner.run(build(*args, **kwargs))

        return method


class sync_pages(Generic[P, T]):
    """A list method of a sync resource: an iterator over every item, page after page."""

    def __init__(self, build: Callable[P, PageCall[T]]) -> None:
        self.build = build

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> sync_pages[P, T]: ...
    @overload
    def __get__(self, obj: SyncResource, owner: type[Any]) -> Callable[P, Iterator[T]]: ...
    def __get__(self, obj: SyncResource | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        runner, build = obj._runner, self.build

        @functools.wraps(build)
        def method(*args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
            return runner.pages(build(*args, **kwargs))

        return method


class async_pages(Generic[P, T]):
    """A list method of an async resource: an async iterator over every item."""

    def __init__(self, build: Callable[P, PageCall[T]]) -> None:
        self.build = build

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> async_pages[P, T]: ...
    @overload
    def __get__(self, obj: AsyncResource, owner: type[Any]) -> Callable[P, AsyncIterator[T]]: ...
    def __get__(self, obj: AsyncResource | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        runner, build = obj._runner, self.build

        @functools.wraps(build)
        def method(*args: P.args, **kwargs: P.kwargs) -> AsyncIterator[T]:
            return runner.pages(build(*args, **kwargs))

        return method
