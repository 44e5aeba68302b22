"""`membank write | search | load | forget`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memory.cli.args import (
    SINCE_HELP,
    UNTIL_HELP,
    add_tag_filter,
    context,
    positive,
    text_arg,
    time_range,
)
from memory.cli.output import emit_json, say, table
from memory.models import MEMORY_TYPES


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the entry commands."""
    write = commands.add_parser("write", parents=[common], help="write one entry ('-' = stdin)")
    write.add_argument("bank", metavar="BANK", help="bank name or id")
    write.add_argument(
        "text",
        metavar="TEXT",
        help="the entry's text; `-` reads it from stdin (UTF-8, up to 256 kB)",
    )
    write.add_argument("--key", required=True, help="the partition: a conversation or user id")
    write.add_argument("--speaker", help="who said it (required in a conversation bank)")
    write.add_argument("--role", help="e.g. user or assistant")
    write.add_argument(
        "--tag", action="append", default=[], dest="tags", help="a tag; repeat for more"
    )
    write.add_argument("--memory-type", help="general banks only: " + ", ".join(MEMORY_TYPES))
    write.set_defaults(handler=_write)

    search = commands.add_parser("search", parents=[common], help="hybrid search of a bank")
    search.add_argument("bank", metavar="BANK", help="bank name or id")
    search.add_argument("query", metavar="QUERY", help="what to look for; `-` reads it from stdin")
    search.add_argument("--key", help="only this partition")
    add_tag_filter(search)
    search.add_argument("--speaker", help="only this speaker's entries")
    search.add_argument("--since", help=SINCE_HELP)
    search.add_argument("--until", help=UNTIL_HELP)
    search.add_argument(
        "-k", type=positive, default=10, help="how many entries to return, 1-1000 (default 10)"
    )
    search.add_argument(
        "--method",
        choices=["hybrid", "vector", "fts"],
        default="hybrid",
        help="hybrid (default): vector and full-text results fused; or only one of them",
    )
    search.add_argument(
        "--min-score",
        type=float,
        metavar="X",
        help="drop hits scoring below X (calibrated scores, see README; default 0.05, "
        "0 keeps every hit)",
    )
    search.add_argument(
        "--rerank",
        metavar="MODEL",
        help="a litellm model reorders the best 30 hits (default MEMBANK_RERANK_MODEL; "
        "unset: off). Scores stay the calibrated ones",
    )
    search.set_defaults(handler=_search)

    load = commands.add_parser("load", parents=[common], help="a key's whole thread, oldest first")
    load.add_argument("bank", metavar="BANK", help="bank name or id")
    load.add_argument("--key", required=True, help="the partition to load")
    load.set_defaults(handler=_load)

    forget = commands.add_parser("forget", parents=[common], help="delete one entry for good")
    forget.add_argument("bank", metavar="BANK", help="bank name or id")
    forget.add_argument(
        "entry_id", metavar="ENTRY_ID", help="the entry's id (from write, load or search)"
    )
    forget.set_defaults(handler=_forget)


def _write(args: argparse.Namespace) -> int:
    from memory.models import EntryIn
    from memory.ops import entries

    item = EntryIn(
        key=args.key,
        content=text_arg(args.text),
        speaker=args.speaker,
        role=args.role,
        memory_type=args.memory_type,
        tags=args.tags,
    )
    result = entries.write(context(args), entries.WriteRequest(bank=args.bank, items=[item]))
    bank, (entry,) = result.bank, result.entries
    if args.json:
        emit_json(entry)
    else:
        say(f"wrote {entry.id} to {bank.name} (key {entry.key!r}, {entry.token_count} tokens)")
    return 0


def _search(args: argparse.Namespace) -> int:
    from memory.models import SearchQuery
    from memory.ops import entries

    since, until = time_range(args.since, args.until)
    query = SearchQuery(
        text=text_arg(args.query),
        k=args.k,
        key=args.key,
        tags=args.tags,
        speaker=args.speaker,
        since=since,
        until=until,
        method=args.method,
        min_score=args.min_score,
    )
    request = entries.SearchRequest(bank=args.bank, query=query, rerank_model=args.rerank)
    hits = entries.search(context(args), request).hits
    if args.json:
        emit_json(hits)
        return 0
    rows = [
        (f"{h.score:.4f}", h.entry.key, h.entry.speaker or "", _short(h.entry.content), h.entry.id)
        for h in hits
    ]
    say(table(rows, ["score", "key", "speaker", "content", "id"]))
    return 0


def _load(args: argparse.Namespace) -> int:
    from memory.ops import entries

    request = entries.LoadRequest(bank=args.bank, key=args.key)
    thread = entries.load(context(args), request).entries
    if args.json:
        emit_json(thread)
        return 0
    for entry in thread:
        who = f"{entry.speaker}: " if entry.speaker else ""
        label = " [summary]" if entry.kind == "summary" else ""
        say(f"{entry.created_at:%Y-%m-%d %H:%M:%S} {who}{entry.content}{label}")
    return 0


def _forget(args: argparse.Namespace) -> int:
    from memory.ops import entries

    ctx = context(args)  # answer once the entry is unreadable, then prune before exiting
    result = entries.forget(ctx, entries.ForgetRequest(args.bank, args.entry_id, final=False))
    if args.json:
        emit_json({"forgotten": result.entry.id})
    else:
        say(f"forgot {result.entry.id}: its text, vectors and old versions are gone")
    sys.stdout.flush()
    entries.finish_forget(ctx, result)
    return 0


def _short(text: str, width: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
