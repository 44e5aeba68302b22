"""The latest stored turn of each key of a conversation bank, remembered between one store's
writes, so a write to keys it saw finds the turns it carries without a scan (issue 24).

A conversation write carries, in each key, the turn before its first new turn
(`memory.store.neighbour_text`): finding it was a scan of the keys' stored turns, whose cost
grows with the bank. After a write this store committed, it knows each written key's latest
turn (its last new turn, or the stored one when the new turns are older): that holds exactly
as long as the entries table is still at the version that write committed, so every entry
is stamped with the version and its commit time (a table dropped and made again cannot match
both) and used only while the table's latest version has that stamp. Any other commit (a
deletion, a prune, a tag rewrite, another writer, this store's own index maintenance) moves
the version and the next write scans its keys again; a key not remembered is scanned too.

Bounded: at most `limit` keys over all banks, the least recently used forgotten first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory.store.neighbour_text import Carried

Stamp = tuple[int, datetime]
"""A table version and the time it was committed."""


def stamp_of(dataset: Any) -> Stamp:
    """Return the stamp of a Lance dataset's checked-out version (from its loaded manifest)."""
    version = dataset.get_version()
    return int(version["version"]), version["timestamp"]


@dataclass(frozen=True, slots=True)
class Latest:
    """A key's latest stored turn (None: the key has none) and its time in microseconds."""

    micros: int
    turn: Carried | None


class LatestTurns:
    """The latest turn of recently written keys, per bank, valid at one stamp per bank."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._stamps: dict[str, Stamp] = {}
        self._turns: OrderedDict[tuple[str, str], Latest] = OrderedDict()
        self._lock = threading.Lock()  # one store serves an API's threads

    def known(self, bank_id: str, stamp: Stamp, keys: Iterable[str]) -> dict[str, Latest]:
        """Return the remembered latest turns of `keys` when the bank's table is at `stamp`
        (else nothing: what was remembered no longer holds and is forgotten)."""
        with self._lock:
            if self._stamps.get(bank_id) != stamp:
                self._forget(bank_id)
                return {}
            found: dict[str, Latest] = {}
            for key in keys:
                latest = self._turns.get((bank_id, key))
                if latest is not None:
                    self._turns.move_to_end((bank_id, key))
                    found[key] = latest
            return found

    def remember(
        self, bank_id: str, before: Stamp, after: Stamp, latest: Mapping[str, Latest]
    ) -> None:
        """Record the latest turns a write committed at `after` left, when the table was at
        `before` as the write read it (else the bank is forgotten: another commit may lie in
        between, and `after`'s version is not the next one)."""
        with self._lock:
            if after[0] != before[0] + 1 or self._stamps.get(bank_id, before) != before:
                self._forget(bank_id)
                return
            self._stamps[bank_id] = after
            for key, turn in latest.items():
                self._turns[(bank_id, key)] = turn
                self._turns.move_to_end((bank_id, key))
            while len(self._turns) > self.limit:
                self._turns.popitem(last=False)

    def forget(self, bank_id: str) -> None:
        """Forget everything remembered of a bank."""
        with self._lock:
            self._forget(bank_id)

    def _forget(self, bank_id: str) -> None:
        if self._stamps.pop(bank_id, None) is None:
            return
        for pair in [pair for pair in self._turns if pair[0] == bank_id]:
            del self._turns[pair]
