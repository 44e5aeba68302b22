"""The membank MCP server: every REST operation as a tool, on stdio or streamable HTTP."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

from memory.api.mcp import bank_tools, config_tools, entry_tools, export_tools, memory_tools
from memory.api.mcp.tooling import AccountOf, Toolkit
from memory.api.state import ApiState
from memory.api.writes import WritePool

INSTRUCTIONS = (
    "membank: memory banks for agents. list_memory_banks gives the ids the other tools take "
    "as memory_bank_id. Write entries with write_memory_bank_entry, find them with "
    "search_memory_bank, read a conversation with load_memory_bank_thread. Long-term memories "
    "of a user: memory_remember, memory_recall, memory_forget."
)
TOOL_GROUPS: Sequence[Sequence[Callable[..., Any]]] = (
    bank_tools.TOOLS,
    entry_tools.TOOLS,
    export_tools.TOOLS,
    config_tools.TOOLS,
    memory_tools.TOOLS,
)


READ_ONLY = ToolAnnotations(read_only_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
CHANGES = ToolAnnotations(read_only_hint=False, destructive_hint=False)
DELETES = {
    "delete_memory_bank",
    "delete_memory_bank_source",
    "forget_memory_bank_entry",
    "memory_forget",
    "compact_memory_bank_now",
    "update_memory_bank",
    "accept_memory_bank_config",
}
"""Tools that delete data or overwrite settings (compaction replaces entries by a summary)."""
WRITES = {"create_memory_bank", "write_memory_bank_entry", "memory_remember"}
"""Tools that add data; every other tool only reads (an export or a test writes no bank)."""
POOLED = {"write_memory_bank_entry", "memory_remember"}
"""Tools that chunk and embed: in the REST app they run in its write pool."""


def hints(name: str) -> ToolAnnotations:
    """Return the hints MCP clients show for a tool (read only, or destructive)."""
    if name in DELETES:
        return DESTRUCTIVE
    return CHANGES if name in WRITES else READ_ONLY


def build_server(
    state: ApiState, account_of: AccountOf | None = None, *, writes: WritePool | None = None
) -> MCPServer:
    """Return an MCP server whose tools run on `state.base` (its store, clock, models).

    Args:
        state: the base context every call runs on, the job pool and the export folder
            (the REST app's when mounted in it; `own_state(ctx)` otherwise).
        account_of: returns the account of a call (over HTTP: the API key's); None = every
            call acts for `state.base.account` (stdio: a local, trusted process).
        writes: the REST app's write pool (mounted in it): entry writes and remembered
            memories take turns with the account's REST writes there.

    Returns:
        A new server (its HTTP session manager can be run once, so build one per app).
    """
    kit = Toolkit(state, account_of, writes)
    tools = [
        kit.tool(run, annotations=hints(run.__name__), pooled=run.__name__ in POOLED)
        for group in TOOL_GROUPS
        for run in group
    ]
    return MCPServer("membank", instructions=INSTRUCTIONS, tools=tools, log_level="WARNING")
