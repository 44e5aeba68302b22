"""Small Protocols for the collaborators passed into the core: embedder, completer, clock, and
the store (`BankRegistry`, `EntryStore`, `LabRuns`, `ApiKeys` and their union `Store`,
described in `memory.store_ports`, re-exported here).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from memory.store_ports import ApiKeys, BankRegistry, EntryStore, LabRuns, Store
from memory.types.deletion import DeletionReceipt, PartitionSize, PrunePending

__all__ = [
    "ApiKeys",
    "BankRegistry",
    "DeletionReceipt",
    "EntryStore",
    "LabRuns",
    "PartitionSize",
    "PrunePending",
    "Store",
]  # re-exported: callers import them here

Vectors = npt.NDArray[np.float32]


class Message(BaseModel):
    """One chat message sent to a completion model."""

    role: Literal["system", "user", "assistant"]
    content: str


class Embedder(Protocol):
    """Turns texts into fixed-size float32 vectors."""

    name: str
    dims: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return one L2-normalised vector per text, shape (len(texts), dims)."""
        ...


class Completer(Protocol):
    """Sends chat messages to a language model and returns its text."""

    model: str

    def complete(self, messages: Sequence[Message]) -> str:
        """Return the model's reply; raise ProviderError on failure or timeout."""
        ...


class Clock(Protocol):
    """Tells the time, so tests can fix it."""

    def now(self) -> datetime:
        """Return the current timezone-aware UTC time."""
        ...
