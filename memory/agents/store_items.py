"""The LangGraph store's items in the per-user wipe: the banks `MembankStore` made (their
description is `STORE_MARK`) may hold user-tagged items a `user_at` store wrote before a
user's items became that user's long-term memories (those are wiped with the long-term
layer, once); the wipe deletes these rows for good like any layer's. Items of a store made
without `user_at` carry no user and are not a user's rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory import banks
from memory.agents.identity import rows_of_user
from memory.agents.memories import check_user
from memory.agents.receipt import TableWipe, wipe_rows

if TYPE_CHECKING:
    from memory.context import Context

STORE_MARK = "LangGraph store namespace (memory.integrations.langgraph.MembankStore)"
"""Description of the banks the LangGraph store makes; it reads and writes only those."""


def wipe_user(ctx: Context, user: str, *, legacy: bool = True) -> list[TableWipe]:
    """Delete every LangGraph store item of `user` for good, one receipt line per store bank
    (`legacy` changes nothing: store items carry their user tag from the first put)."""
    check_user(user)
    del legacy
    return [
        line
        for bank in banks.list_banks(ctx, "general")
        if bank.description == STORE_MARK
        for line in wipe_rows(ctx, bank, "langgraph", rows_of_user(user))
    ]
