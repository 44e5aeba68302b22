"""What a per-user wipe removed, per layer and table (the right-to-be-forgotten receipt)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Layer = Literal["working", "session", "long_term"]


class TableWipe(BaseModel):
    """Rows of one user removed from one table, and that table's version once pruned."""

    model_config = ConfigDict(extra="forbid")

    layer: Layer
    """The memory layer the table belongs to."""
    table: str
    """The table (or bank id) the rows were removed from."""
    rows_removed: int
    """How many rows of the user the wipe deleted."""
    version_after: int | None
    """The table's version after the wipe and its prune (None: the table does not exist)."""
