"""What a per-user wipe removed, per layer and table (the right-to-be-forgotten receipt)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from memory import purge
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.context import Context
    from memory.models import Bank

Layer = Literal["working", "session", "long_term", "langgraph"]


class TableWipe(BaseModel):
    """Rows of one user removed from one table, and that table's version once pruned."""

    model_config = ConfigDict(extra="forbid")

    layer: Layer
    """The memory layer the table belongs to."""
    table: str
    """The table (or bank id) the rows were removed from."""
    rows_removed: int
    """How many rows (entries) of the user the wipe deleted."""
    version_after: int | None
    """The table's version after the wipe and its prune (None: the table does not exist)."""


def wipe_rows(ctx: Context, bank: Bank, layer: Layer, which: EntryFilter) -> list[TableWipe]:
    """Delete the entries `which` selects for good and return the table's receipt line.

    Nothing selected (nothing of the user left) still finishes a prune a failed wipe left
    due, so a wipe run again completes. The bank's summary counter is rederived, so
    `verify` is clean straight after.
    """
    removed = ctx.store.count_entries(bank.id, which)
    if removed:
        purge.delete_final(ctx, bank, which)
        purge.record_summary_count(ctx, bank)
    else:
        purge.finish(ctx, bank)
    version = ctx.store.table_version(bank.id)
    return [TableWipe(layer=layer, table=bank.id, rows_removed=removed, version_after=version)]
