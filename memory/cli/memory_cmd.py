"""`membank memory remember | recall | forget | list` and `membank user wipe`."""

from __future__ import annotations

import argparse
from typing import Any

from memory.cli.args import context, positive, text_arg
from memory.cli.output import counted, emit_json, progress_bar, say, table

SCOPE_HELP = "user: every agent of the user sees it (default); agent: only --agent"


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the long-term memory and user commands."""
    memory = commands.add_parser("memory", help="a user's long-term memories")
    sub = memory.add_subparsers(dest="memory_command", required=True, parser_class=type(memory))

    remember = sub.add_parser("remember", parents=[common], help="store a memory of a user")
    _who(remember)
    remember.add_argument("--scope", default="user", help=SCOPE_HELP)
    remember.add_argument(
        "--memory-type",
        default="fact",
        help="fact (default), preference, relationship or instruction",
    )
    remember.add_argument(
        "--tag", action="append", default=[], dest="tags", help="a keyword; repeat for more"
    )
    remember.add_argument("text", metavar="TEXT", help="the memory; `-` reads it from stdin")
    remember.set_defaults(handler=_remember)

    recall = sub.add_parser("recall", parents=[common], help="a user's memories closest to QUERY")
    _who(recall)
    recall.add_argument("query", metavar="QUERY", help="what to look for; `-` reads stdin")
    recall.add_argument("-k", type=positive, default=10, help="how many, 1-1000 (default 10)")
    recall.set_defaults(handler=_recall)

    listing = sub.add_parser("list", parents=[common], help="every memory of a user")
    _who(listing)
    listing.set_defaults(handler=_list)

    forget = sub.add_parser("forget", parents=[common], help="delete one memory for good")
    _who(forget)
    forget.add_argument(
        "memory_id", metavar="MEMORY_ID", help="the memory's id (from remember or recall)"
    )
    forget.set_defaults(handler=_forget)

    user = commands.add_parser("user", help="per-user operations")
    users = user.add_subparsers(dest="user_command", required=True, parser_class=type(user))
    wipe = users.add_parser(
        "wipe", parents=[common], help="right to be forgotten: every trace, every layer"
    )
    wipe.add_argument("user", metavar="USER", help="the user id")
    wipe.set_defaults(handler=_wipe)


def _who(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--user", required=True, help="the user id")
    parser.add_argument(
        "--agent", help="the agent (sees user-wide memories and its own; default: all)"
    )


def _remember(args: argparse.Namespace) -> int:
    from memory.ops import agents

    request = agents.RememberRequest(
        user=args.user,
        agent=args.agent,
        content=text_arg(args.text),
        type=args.memory_type,
        tags=tuple(args.tags),
        scope=args.scope,
        require_known_agent=True,
    )
    memory = agents.remember(context(args), request)
    if args.json:
        emit_json(memory)
    else:
        say(
            f"remembered {memory.id} for user {memory.user!r} ({memory.type}, scope {memory.scope})"
        )
    return 0


def _recall(args: argparse.Namespace) -> int:
    from memory.ops import agents

    request = agents.RecallRequest(
        user=args.user, agent=args.agent, query=text_arg(args.query), k=args.k
    )
    found = agents.recall(context(args), request).memories
    if args.json:
        emit_json(found)
        return 0
    rows = [
        (
            f"{hit.score:.4f}",
            hit.memory.type,
            hit.memory.scope,
            _short(hit.memory.content),
            hit.memory.id,
        )
        for hit in found
    ]
    say(table(rows, ["score", "type", "scope", "content", "id"]))
    return 0


def _list(args: argparse.Namespace) -> int:
    from memory.ops import agents

    request = agents.ListMemoriesRequest(user=args.user, agent=args.agent)
    found = agents.list_memories(context(args), request).memories
    if args.json:
        emit_json(found)
        return 0
    rows = [
        (f"{m.created_at:%Y-%m-%d %H:%M}", m.type, m.scope, m.agent or "", _short(m.content), m.id)
        for m in found
    ]
    say(table(rows, ["saved", "type", "scope", "agent", "content", "id"]))
    return 0


def _forget(args: argparse.Namespace) -> int:
    from memory.ops import agents

    request = agents.ForgetRequest(user=args.user, agent=args.agent, memory_id=args.memory_id)
    memory = agents.forget(context(args), request)
    if args.json:
        emit_json({"forgotten": memory})
    else:
        say(f"forgot {memory.id}: its text, vector and old versions are gone")
    return 0


def _wipe(args: argparse.Namespace) -> int:
    from memory.ops import agents

    with progress_bar(None, " layers") as progress:
        receipt = agents.wipe_user(context(args), agents.WipeRequest(user=args.user), progress)
    if args.json:
        emit_json(receipt)
        return 0
    say(
        f"wiped user {receipt.user!r}: {counted(receipt.rows_removed, 'row')} removed, "
        "old table versions pruned"
    )
    rows = [(t.layer, t.table, t.rows_removed, t.version_after) for t in receipt.tables]
    say(table(rows, ["layer", "table", "rows removed", "version after"]))
    return 0


def _short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
