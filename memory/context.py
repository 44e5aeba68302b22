"""The context passed to every core function, and the one place collaborators are wired.

`Context` holds the store, the account, the clock, the embedder and completer factories and
what runs after a write (inline compaction). A `Context` built by hand gets the same
defaults as `open_context`: nothing depends on which module was imported first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory.clock import SystemClock
from memory.compaction.inline import compact_after_write
from memory.config import Mode
from memory.ports import Clock, Completer, Embedder, Store
from memory.providers.embed import embedder_for
from memory.settings import Settings, checked_account, checked_uri
from memory.store.lance import LanceStore

if TYPE_CHECKING:
    from memory.compaction.apply import CompactionResult
    from memory.models import Bank

WriteHook = Callable[["Context", "Bank", set[str]], Sequence["CompactionResult"]]
"""Runs after a write with the keys it touched; returns what it compacted."""


def _default_embedder(mode: Mode) -> Embedder:
    return embedder_for(mode.embedder, mode.dims)


@dataclass
class Context:
    """Everything a core call needs; `open_context` builds one from settings, tests by hand."""

    store: Store
    account: str = "local"
    clock: Clock = field(default_factory=SystemClock)
    embedder: Callable[[Mode], Embedder] = _default_embedder
    """Returns the embedder for a bank's mode."""
    completer: Callable[[], Completer] | None = None
    """Returns the completer for compaction summaries; None = from settings (the offline
    extractive summarizer, or litellm for any other model name)."""
    settings: Settings = field(default_factory=Settings)
    after_write: WriteHook | None = compact_after_write
    """Runs after every write with the touched keys (inline compaction); None turns it off."""


def open_context(
    uri: str | None = None, *, account: str | None = None, settings: Settings | None = None
) -> Context:
    """Return a context on the LanceDB at `uri` (default: MEMBANK_URI or `.membank`).

    Raises:
        InvalidInput: a blank or `memory://` URI, a file named as the storage folder, or a
            blank or multi-line account.
    """
    resolved = settings or Settings()
    store = LanceStore(checked_uri(uri, resolved))
    return Context(store=store, account=checked_account(account, resolved), settings=resolved)
