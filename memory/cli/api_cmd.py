"""`membank api` (the REST API on uvicorn), `membank keys create | list | revoke` and
`membank audit` (registered here, with the keys it audits)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memory.cli.args import context, port_number
from memory.cli.output import emit_json, say, table


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the api, keys and audit commands."""
    from memory.cli import audit_cmd

    audit_cmd.register(commands, common)
    api = commands.add_parser(
        "api", parents=[common], help="serve the REST API (X-API-Key auth) with uvicorn"
    )
    api.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    api.add_argument("--port", type=port_number, default=8000, help="port (default 8000)")
    api.add_argument(
        "--workers",
        type=int,
        default=1,
        help="uvicorn worker processes on the port (default 1; more needs MEMBANK_JOBS=prefect)",
    )
    api.set_defaults(handler=_api)

    keys = commands.add_parser("keys", help="create, list and revoke API keys")
    sub = keys.add_subparsers(dest="bank_command", required=True, parser_class=type(keys))
    create = sub.add_parser(
        "create", parents=[common], help="make a key for an account (shown once)"
    )
    create.add_argument("--account", required=True, help="the account the key acts for")
    create.add_argument(
        "--scope",
        action="append",
        choices=("read", "write", "admin"),
        help="what the key may do (repeat; default admin: every scope, keys and audit)",
    )
    create.add_argument(
        "--bank", action="append", help="limit the key to this bank (id or name; repeat)"
    )
    create.set_defaults(handler=_create)
    listing = sub.add_parser("list", parents=[common], help="list keys (never their secrets)")
    listing.add_argument("--account", help="only this account's keys")
    listing.set_defaults(handler=_list)
    revoke = sub.add_parser("revoke", parents=[common], help="revoke a key: 401 from now on")
    revoke.add_argument("key_id", metavar="KEY_ID", help="the key's id, as `keys list` shows")
    revoke.set_defaults(handler=_revoke)


def _api(args: argparse.Namespace) -> int:
    from memory.api.server import check_workers, serve

    base = context(args)
    check_workers(args.workers, base.settings)  # a bad --workers is exit 2 before serving
    sys.stderr.write(
        f"membank: REST API on http://{args.host}:{args.port} (docs at /docs), "
        f"storage {base.store.location}, {args.workers} worker(s), jobs "
        f"{base.settings.jobs}; Ctrl-C stops it\n"
    )
    serve(base, host=args.host, port=args.port, workers=args.workers)
    return 0


def _create(args: argparse.Namespace) -> int:
    import dataclasses

    from memory.ops import keys

    base = context(args)
    ctx = dataclasses.replace(base, account=args.account)
    made = keys.create(ctx, keys.CreateKey(scopes=args.scope, banks=args.bank))
    if args.json:
        emit_json(made)
    else:
        say(made.key)
        sys.stderr.write(
            f"membank: key {made.key_id} for account {made.account!r} "
            f"({', '.join(made.scopes)}{'; banks ' + ', '.join(made.banks) if made.banks else ''}"
            "): it is shown only "
            "this once (only its hash is stored); send it as the X-API-Key header\n"
        )
    return 0


def _list(args: argparse.Namespace) -> int:
    from memory.accounts import list_keys

    found = list_keys(context(args), args.account)
    if args.json:
        emit_json([{**k.model_dump(mode="json"), "active": k.active} for k in found])
    elif not found:
        say("no API keys")
    else:
        rows = [
            (
                k.key_id,
                k.account,
                ",".join(k.scopes),
                "all" if k.banks is None else ",".join(k.banks),
                f"{k.created_at:%Y-%m-%d %H:%M}",
                _revoked(k.revoked_at),
            )
            for k in found
        ]
        say(table(rows, ["key_id", "account", "scopes", "banks", "created", "revoked"]))
    return 0


def _revoked(when: Any) -> str:
    return "" if when is None else f"{when:%Y-%m-%d %H:%M}"


def _revoke(args: argparse.Namespace) -> int:
    from memory.accounts import revoke_key

    key = revoke_key(context(args), args.key_id)
    if args.json:
        emit_json({**key.model_dump(mode="json"), "active": key.active})
    else:
        say(f"revoked {key.key_id} (account {key.account!r}): requests with it now get 401")
    return 0
