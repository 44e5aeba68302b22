"""The context passed to every core function: the collaborators a call works with.

`Context` holds the store, the account, the clock, the embedder factory, the completer
factory and the settings. The concrete ones are made in `memory.wiring` (`open_context`);
a `Context` built by hand gets the same defaults, so nothing depends on which module was
imported first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory.clock import SystemClock
from memory.ports import Clock, Completer, Embedder, Store
from memory.settings import Settings

if TYPE_CHECKING:
    from memory.config import Mode


def _default_embedder(mode: Mode) -> Embedder:
    from memory.wiring import embedder_of

    return embedder_of(mode)


@dataclass
class Context:
    """Everything a core call needs; `memory.wiring.open_context` builds one from settings,
    tests by hand."""

    store: Store
    account: str = "local"
    clock: Clock = field(default_factory=SystemClock)
    embedder: Callable[[Mode], Embedder] = _default_embedder
    """Returns the embedder for a bank's mode."""
    completer: Callable[[], Completer] | None = None
    """Returns the completer for compaction summaries; None = the one the settings name (the
    offline extractive summarizer, or litellm for any other model name)."""
    settings: Settings = field(default_factory=Settings)

    def for_account(self, account: str) -> Context:
        """Return this context acting for `account` (a sweep works on each account's banks in
        turn; the bank record it updates lives in that account)."""
        return self if self.account == account else dataclasses.replace(self, account=account)

    def summary_completer(self) -> Completer:
        """Return the completer for summaries: the one given, or the one the settings name."""
        if self.completer is not None:
            return self.completer()
        from memory.wiring import completer_of

        return completer_of(self.settings)
