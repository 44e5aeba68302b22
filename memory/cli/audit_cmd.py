"""`membank audit --account A`: an account's audit log (every authenticated API change),
newest first."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from memory.cli.args import context
from memory.cli.output import emit_json, say, table


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the audit command."""
    audit = commands.add_parser(
        "audit", parents=[common], help="show an account's audit log (API changes, newest first)"
    )
    audit.add_argument("--account", required=True, help="the account whose log to show")
    audit.add_argument("--limit", type=int, default=50, help="rows to show (default 50)")
    audit.add_argument("--cursor", help="show rows older than this id (the last one shown)")
    audit.set_defaults(handler=_audit)


def _audit(args: argparse.Namespace) -> int:
    from memory.errors import InvalidInput
    from memory.ops import audit

    if not 1 <= args.limit <= 10_000:
        raise InvalidInput(f"--limit must be 1-10000, got {args.limit}")
    ctx = dataclasses.replace(context(args), account=args.account)
    found = audit.events(ctx, limit=args.limit, cursor=args.cursor)
    if args.json:
        emit_json([e.model_dump(mode="json") for e in found])
    elif not found:
        say(f"no audit events for account {args.account!r}")
    else:
        rows = [
            (f"{e.at:%Y-%m-%d %H:%M:%S}", e.key_id, e.action, e.target, str(e.status), e.id)
            for e in found
        ]
        say(table(rows, ["at", "key", "action", "target", "status", "id"]))
    return 0
