"""Test doubles shipped with the library: a deterministic embedder and a scripted completer."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from memory.errors import ProviderError
from memory.ports import Message, Vectors

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Deterministic bag-of-words embedder: each word hashes to a signed dimension.

    Texts that share words get similar vectors, so search tests behave sensibly without a
    model. Same input, same vector, on every machine.
    """

    def __init__(self, dims: int = 384, name: str = "membank/hashing") -> None:
        self.dims = dims
        self.name = name

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return one L2-normalised hashed bag-of-words vector per text."""
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dims] += 1.0 if (value >> 63) & 1 else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
            else:
                out[row, 0] = 1.0
        return out


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
