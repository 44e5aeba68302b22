"""`membank maintain | verify`: finish interrupted deletions and check that deletion is final."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from memory.cli.args import context
from memory.cli.output import emit_json, say, table

if TYPE_CHECKING:
    from memory.ops.maintenance import BankHealth


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the maintain and verify commands."""
    maintain = commands.add_parser(
        "maintain",
        parents=[common],
        help="finish any deletion a crash or a full disk left unpruned; repair bank counters",
    )
    _target(maintain)
    maintain.set_defaults(handler=_maintain)

    verify = commands.add_parser(
        "verify",
        parents=[common],
        help="exit 1 if deleted rows, old versions holding them, or wrong counters remain",
    )
    _target(verify)
    verify.set_defaults(handler=_verify)


def _target(parser: argparse.ArgumentParser) -> None:
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("bank", metavar="BANK", nargs="?", help="bank name or id")
    target.add_argument("--all", action="store_true", help="every bank of the account")


def _maintain(args: argparse.Namespace) -> int:
    return _run(args, "maintain")


def _verify(args: argparse.Namespace) -> int:
    return _run(args, "verify")


def _run(args: argparse.Namespace, command: str) -> int:
    """Verify or maintain BANK or every bank; one bank's error is the command's (exit 3
    when it does not exist), while --all reports each bank's and goes on."""
    from memory.cli.output import progress_bar
    from memory.ops import maintenance, sweeps

    action = {"maintain": maintenance.maintain, "verify": maintenance.verify}[command]
    request = maintenance.MaintenanceRequest(bank=None if args.all else args.bank)
    ctx = context(args)
    with progress_bar(None, " banks") as progress:
        results = action(ctx, request, progress)
    if (note := sweeps.lock_note(ctx)) and command == "verify":  # what no check can see
        sys.stderr.write(f"membank: note: {note}\n")
    return _report(args, results, command)


def _report(args: argparse.Namespace, results: list[BankHealth], command: str) -> int:
    """Print the results; returns 1 when a bank is not clean (or failed), else 0."""
    if args.json:
        emit_json([{**r.model_dump(mode="json"), "clean": r.clean} for r in results])
    elif not results:
        say("no banks")
    else:
        say(table([_row(r, command) for r in results], _headers(command)))
    for r in results:
        if r.error is not None:
            sys.stderr.write(f"membank: {command} of bank {r.bank_name!r} failed: {r.error}\n")
        elif not r.clean:
            for problem in r.problems:
                sys.stderr.write(f"membank: bank {r.bank_name!r}: {problem}\n")
    if command == "verify" and any(not r.clean for r in results):
        sys.stderr.write("membank: run `membank maintain BANK` (or --all) to finish and repair\n")
    return 0 if all(r.clean for r in results) else 1


def _headers(command: str) -> list[str]:
    done = ["pruned", "repaired"] if command == "maintain" else []
    stale = ["stale versions", "stale segments"]
    return ["bank", "status", "deleted rows", *stale, "old versions", *done]


def _row(health: BankHealth, command: str) -> list[object]:
    if health.error is not None:
        status = "failed"
    else:
        status = "clean" if health.clean else f"{len(health.problems)} problems"
    row: list[object] = [
        health.bank_name,
        status,
        health.deleted_rows,
        health.stale_versions,
        health.stale_segments,
        health.old_versions,
    ]
    if command == "maintain":
        row += [
            "yes" if health.pruned else "no",
            ", ".join(p.split()[0] for p in health.repaired) or "-",
        ]
    return row
