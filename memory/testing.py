"""Test doubles shipped with the library: a deterministic embedder and a scripted completer."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memory.embed import HashingEmbedder
from memory.errors import ProviderError
from memory.ports import Message

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


__all__ = ["HashingEmbedder", "ScriptedCompleter"]
