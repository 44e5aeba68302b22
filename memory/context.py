"""The context passed to every core function: store, account, clock and collaborators."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memory.clock import SystemClock
from memory.config import Mode
from memory.embed import embedder_for
from memory.ports import Clock, Completer, Embedder
from memory.settings import Settings, checked_account, checked_uri
from memory.store import LanceStore


def _default_embedder(mode: Mode) -> Embedder:
    return embedder_for(mode.embedder, mode.dims)


@dataclass
class Context:
    """Everything a core call needs; build one with `open_context` (or by hand in tests)."""

    store: LanceStore
    account: str = "local"
    clock: Clock = field(default_factory=SystemClock)
    embedder: Callable[[Mode], Embedder] = _default_embedder
    """Returns the embedder for a bank's mode."""
    completer: Callable[[], Completer] | None = None
    """Returns the completer for compaction summaries; None = from settings (litellm)."""
    settings: Settings = field(default_factory=Settings)


def open_context(
    uri: str | None = None, *, account: str | None = None, settings: Settings | None = None
) -> Context:
    """Return a context on the LanceDB at `uri` (default: MEMBANK_URI or `.membank`).

    Raises:
        InvalidInput: a blank or `memory://` URI, a file named as the storage folder, or a
            blank or multi-line account.
    """
    import memory.compaction  # noqa: F401  (registers inline compaction after every write)

    resolved = settings or Settings()
    store = LanceStore(checked_uri(uri, resolved))
    return Context(store=store, account=checked_account(account, resolved), settings=resolved)
