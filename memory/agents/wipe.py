"""The per-user wipe (right to be forgotten): every layer deletes the user's rows for good.

Each layer has a wiper, `wipe_user(ctx, user) -> list[TableWipe]`, that deletes the user's
rows from its tables and prunes them (no old table version keeps them), so no read path
(recall, search, load, stats, export) nor any table file holds them afterwards. `WIPERS`
lists them; `wipe_user` runs each and returns one receipt. A wipe is idempotent: a wipe
stopped part way (a crash, a full disk) is finished by running it again.

Every layer selects the user's rows by filter (identity tags, the long-term key), with no
full scan and no JSON parsing, except the fallback for rows written before identity tags
existed (`legacy`, on by default): it reads the working and session banks whole. It is
needed only until `membank maintain` ran on those banks, which tags such rows
(`memory.agents.checks.tag_legacy_rows`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict

from memory.agents import longterm, session, store_items, working
from memory.agents.memories import check_user
from memory.agents.receipt import Layer, TableWipe
from memory.errors import StorageError
from memory.purge import PrunePending

if TYPE_CHECKING:
    from memory.context import Context


class Wiper(Protocol):
    """A layer's wiper: deletes the user's rows from its tables for good."""

    __module__: str

    def __call__(self, ctx: Context, user: str, *, legacy: bool = True) -> list[TableWipe]:
        """Return one receipt line per table wiped (`legacy`: also untagged old rows)."""
        ...


WIPERS: tuple[Wiper, ...] = (
    working.wipe_user,
    session.wipe_user,
    longterm.wipe_user,
    store_items.wipe_user,
)
"""Every layer's wiper (and the LangGraph store's items of the user), each one filtered
final deletion of the user's rows. They run under the user's lock (the one session merges
take), so their order does not matter: no merge runs between them."""


class WipeReceipt(BaseModel):
    """What a per-user wipe removed, per table and per layer, and the versions after it."""

    model_config = ConfigDict(extra="forbid")

    user: str
    tables: list[TableWipe]
    """One line per table the wipe looked at."""
    counts: dict[Layer, int]
    """Rows removed per layer."""
    finished_at: datetime

    @property
    def rows_removed(self) -> int:
        """Return how many rows the wipe removed in all."""
        return sum(table.rows_removed for table in self.tables)


def wipe_user(
    ctx: Context,
    user: str,
    *,
    wipers: Sequence[Wiper] = WIPERS,
    legacy: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> WipeReceipt:
    """Delete every trace of `user` in every layer, for good; returns the receipt.

    Args:
        ctx: the context (its account is the one wiped).
        user: the user id.
        wipers: the layers' wipers (default: all of them).
        legacy: also find rows written before identity tags existed by their metadata (a
            read of the working and session banks; not needed once `membank maintain` ran).
        progress: called with (1, layers in all) after each layer, finished or failed.

    Raises:
        InvalidInput: a blank, too long or multi-line user id.
        PrunePending: a layer failed (e.g. its prune, on a full disk); every other layer
            was wiped, and running the wipe again (or `membank maintain --all`) finishes it.
    """
    check_user(user)
    tables: list[TableWipe] = []
    failed: list[str] = []
    with session.user_lock(ctx, user, timeout=None):
        for wiper in wipers:  # a layer that fails does not stop the others
            try:
                tables += wiper(ctx, user, legacy=legacy)
            except StorageError as exc:
                failed.append(f"{wiper.__module__.rsplit('.', 1)[-1]}: {exc}")
            if progress is not None:
                progress(1, len(wipers))
    if failed:
        raise PrunePending(
            f"the wipe of user {user!r} did not finish in every layer ({'; '.join(failed)}): "
            "run it again, or `membank maintain --all`, to finish it"
        )
    counts: dict[Layer, int] = {}
    for line in tables:
        counts[line.layer] = counts.get(line.layer, 0) + line.rows_removed
    return WipeReceipt(user=user, tables=tables, counts=counts, finished_at=ctx.clock.now())
