"""Memory bank tools: list, templates, get, create, update, delete, delete source, stats.

Each is one call into `memory` returning the record its REST endpoint returns (pages, the
delete receipts), so a tool and its endpoint answer alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory import config
from memory.agents import registry as agents
from memory.api.mcp.inputs import (
    BankPage,
    BankRef,
    CreateBank,
    ListBanks,
    Paged,
    StatsInput,
    UpdateBank,
)
from memory.api.routes.banks import bank_page
from memory.api.schemas import AgentRef, Deleted, Page, SourceReset, TemplateOut, page
from memory.context import Context
from memory.models import Bank
from memory.ops import banks
from memory.stats import Stats


def list_memory_banks(ctx: Context, args: ListBanks) -> Page[Bank]:
    """List your memory banks, oldest first (optionally only conversation or general ones), a
    page at a time (follow next_cursor)."""
    request = banks.BankPageRequest(
        type=args.type, limit=args.limit, offset=args.offset, cursor=args.cursor
    )
    return bank_page(ctx, request)


def list_memory_bank_templates(ctx: Context, args: Paged) -> Page[TemplateOut]:
    """List the templates a new bank can start from (type, mode, prompt, thresholds, retention)."""
    found = [TemplateOut.model_validate(t.model_dump()) for t in config.templates().values()]
    return page(found, args.limit, args.offset)


def get_memory_bank(ctx: Context, args: BankRef) -> Bank:
    """Return one memory bank's configuration."""
    return banks.get(ctx, args.memory_bank_id)


def create_memory_bank(ctx: Context, args: CreateBank) -> Bank:
    """Create a memory bank (type and mode are fixed for life); returns it with its id."""
    return banks.create(ctx, banks.CreateBank(args.to_request()))


def update_memory_bank(ctx: Context, args: UpdateBank) -> Bank:
    """Change a bank's name, description, compaction prompt, thresholds or retention."""
    return banks.update(ctx, banks.UpdateBank(args.memory_bank_id, args.to_request()))


def delete_memory_bank(ctx: Context, args: BankRef) -> Deleted:
    """Delete a memory bank and every entry in it, for good."""
    return Deleted(id=banks.delete(ctx, args.memory_bank_id).id)


def delete_memory_bank_source(ctx: Context, args: BankRef) -> SourceReset:
    """Delete every entry of a bank (reset its data); its configuration stays."""
    return SourceReset(id=banks.reset_source(ctx, args.memory_bank_id).id)


def get_memory_bank_stats(ctx: Context, args: StatsInput) -> Stats:
    """Return a bank's aggregated statistics over a time frame (default: the last 30 days)."""
    request = banks.StatsRequest(
        args.memory_bank_id, since=args.since, until=args.until, top=args.top, days=args.days
    )
    return banks.stats(ctx, request).stats


def list_memory_bank_agents(ctx: Context, args: BankPage) -> Page[AgentRef]:
    """List the agents whose configuration uses a bank."""
    bank = banks.get(ctx, args.memory_bank_id)
    found = [AgentRef(id=a.id, name=a.name) for a in agents.agents_using_bank(ctx, bank)]
    return page(found, args.limit, args.offset)


TOOLS: list[Callable[..., Any]] = [
    list_memory_banks,
    list_memory_bank_templates,
    get_memory_bank,
    create_memory_bank,
    update_memory_bank,
    delete_memory_bank,
    delete_memory_bank_source,
    get_memory_bank_stats,
    list_memory_bank_agents,
]
