"""`membank agents list | show AGENT`: the agents registry (memory layers, banks used)."""

from __future__ import annotations

import argparse
from typing import Any

from memory.cli.args import context
from memory.cli.output import emit_json, say, table


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the agents commands."""
    agents = commands.add_parser("agents", help="list and show agents and their memory layers")
    sub = agents.add_subparsers(dest="agents_command", required=True, parser_class=type(agents))
    sub.add_parser("list", parents=[common], help="list agents").set_defaults(handler=_list)
    show = sub.add_parser("show", parents=[common], help="show one agent")
    show.add_argument("agent", metavar="AGENT", help="agent id")
    show.set_defaults(handler=_show)


def _list(args: argparse.Namespace) -> int:
    from memory.ops import agents

    found = agents.list_agents(context(args))
    if args.json:
        emit_json(found)
        return 0
    rows = [
        (
            a.id,
            a.name,
            ", ".join(a.memory.layers()) or "none",
            ", ".join(a.memory_banks()),
            a.source,
        )
        for a in found
    ]
    say(table(rows, ["id", "name", "layers", "banks", "from"]))
    return 0


def _show(args: argparse.Namespace) -> int:
    from memory.ops import agents

    agent = agents.show_agent(context(args), agents.AgentRequest(agent=args.agent))
    if args.json:
        emit_json(agent)
        return 0
    working, long_term = agent.memory.working(), agent.memory.long_term()
    lines = [
        ("id", agent.id),
        ("name", agent.name),
        ("description", agent.description),
        ("from", agent.source),
        ("working memory", f"max_tokens {working.max_tokens}, summarize" if working else "off"),
        ("session memory", "on" if agent.memory.session_memory else "off"),
        ("long-term memory", f"max_memories {long_term.max_memories}" if long_term else "off"),
        ("conversation key", agent.conversation_key),
        ("sender auth", "required" if agent.email_require_sender_auth else "off"),
    ]
    for name, value in lines:
        say(f"{name:20} {value}")
    for ref in agent.banks:
        speaker = f", speaker {ref.speaker}" if ref.speaker else ""
        say(f"{'step':20} {ref.step} {ref.bank} by key {ref.key}{speaker}")
    return 0
