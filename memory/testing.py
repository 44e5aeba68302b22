"""Test doubles shipped with the library: deterministic embedders, scripted and fixed
completers, and fault injection (a call that fails, a process that dies mid-write)."""

from __future__ import annotations

import itertools
import os
import re
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from memory.errors import ProviderError
from memory.ports import Embedder, Message, Vectors
from memory.providers.embed import HashingEmbedder
from memory.providers.extractive import ExtractiveCompleter

if TYPE_CHECKING:
    from memory.config import Mode

T = TypeVar("T")

_WORD = re.compile(r"\w+", re.UNICODE)


Response = str | BaseException | Callable[[Sequence[Message]], str]


@dataclass
class ScriptedCompleter:
    """A completer that replays enqueued responses and records every call.

    Enqueue strings (returned), exceptions (raised) or callables (called with the messages).
    Calling it with an empty queue raises ProviderError, so a test never silently gets text
    it did not script.
    """

    model: str = "scripted/test"
    queue: list[Response] = field(default_factory=list)
    calls: list[list[Message]] = field(default_factory=list)

    def enqueue(self, *responses: Response) -> ScriptedCompleter:
        """Add responses to the end of the queue; returns self for chaining."""
        self.queue.extend(responses)
        return self

    def complete(self, messages: Sequence[Message]) -> str:
        """Return (or raise) the next scripted response, recording the call."""
        self.calls.append(list(messages))
        if not self.queue:
            raise ProviderError("ScriptedCompleter: no scripted response left")
        response = self.queue.pop(0)
        if isinstance(response, BaseException):
            raise response
        if callable(response):
            return response(messages)
        return response


class PlantedEmbedder:
    """Hashing vectors, except for texts given a planted vector (to pull search methods apart)."""

    def __init__(
        self, dims: int, planted: Mapping[str, Vectors], name: str = "test/planted"
    ) -> None:
        self.name = name
        self.dims = dims
        self._planted = dict(planted)
        self._fallback = HashingEmbedder(dims)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return the planted vector of each planted text, a hashed one for any other."""
        out = self._fallback.embed(texts)
        for row, text in enumerate(texts):
            if text in self._planted:
                out[row] = self._planted[text]
        return out


class KillingEmbedder(HashingEmbedder):
    """A hashing embedder that SIGKILLs its own process on call number `after + 1` (a crash
    in the middle of a write, an ingest or an import, as `kill -9` would cause)."""

    def __init__(self, dims: int, *, after: int) -> None:
        super().__init__(dims)
        self.after = after
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return hashed vectors, or kill this process once `after` calls are done."""
        self.calls += 1
        if self.calls > self.after:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().embed(texts)


class RecordingEmbedder(HashingEmbedder):
    """A hashing embedder that records how many texts each call was given."""

    def __init__(self, dims: int = 384) -> None:
        super().__init__(dims)
        self.batches: list[int] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return hashed vectors, recording the batch size."""
        self.batches.append(len(texts))
        return super().embed(texts)


def hashing_embedder(mode: Mode) -> Embedder:
    """Return a deterministic embedder with the mode's dims (a `Context.embedder`)."""
    return HashingEmbedder(mode.dims)


MARKER = re.compile(r"\bM\d+-\d+\b")
"""A lineage marker (`M<writer>-<index>`) that `MarkerCompleter` carries into summaries."""


class MarkerCompleter:
    """A summarizer that repeats every marker of its input, so lineage survives summaries."""

    model = "test/markers"

    def complete(self, messages: Sequence[Message]) -> str:
        """Return the markers of the previous summary and entries, in order, duplicates kept."""
        return " ".join(MARKER.findall(messages[-1].content))


class PlainCompleter:
    """A summarizer that repeats none of its input: a summarised entry's text must then be
    gone from every file once its compaction is done."""

    model = "test/plain"

    def complete(self, messages: Sequence[Message]) -> str:
        """Return a fixed summary that names only how many messages it got."""
        return f"A summary of {len(messages)} messages."


class CountingExtractiveCompleter(ExtractiveCompleter):
    """The offline extractive summarizer (`membank/extractive`), counting its calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def complete(self, messages: Sequence[Message]) -> str:
        """Return the offline extractive summary of the prompt, counting the call."""
        self.calls += 1
        return super().complete(messages)


def failing_after(
    calls: int, real: Callable[..., T], error: Exception | None = None
) -> Callable[..., T]:
    """Return `real` wrapped to raise `error` (default an injected "disk full" RuntimeError)
    from call number `calls + 1` on: a fault injected part way through."""
    count = itertools.count()

    def wrapper(*args: Any, **kwargs: Any) -> T:
        if next(count) >= calls:
            raise error or RuntimeError("disk full (injected)")
        return real(*args, **kwargs)

    return wrapper


class CountingEncoding:
    """Wraps a token encoding and records the texts it encodes whole (the slow path)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def encode_ordinary(self, text: str) -> list[int]:
        """Return the inner encoding's tokens of `text`, recording the call."""
        self.calls.append(text)
        result: list[int] = self.inner.encode_ordinary(text)
        return result
