"""`membank bank ...`, `membank templates`, `membank modes`."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from memory.cli.args import context, non_negative, retention_days
from memory.cli.output import emit_json, say, table
from memory.errors import InvalidInput

if TYPE_CHECKING:
    from memory.context import Context
    from memory.models import Bank


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the bank, templates and modes commands."""
    bank = commands.add_parser("bank", help="create, list, show, update, delete banks")
    sub = bank.add_subparsers(dest="bank_command", required=True, parser_class=type(bank))

    create = sub.add_parser("create", parents=[common], help="create a bank")
    create.add_argument("--name", required=True, help="1-200 characters, unique in the account")
    create.add_argument(
        "--type",
        choices=["conversation", "general"],
        help="required unless --template gives it; fixed for life",
    )
    create.add_argument("--mode", help="embedding mode (see `membank modes`); fixed for life")
    create.add_argument("--template", help="start from a template (see `membank templates`)")
    _settings_options(create)
    create.set_defaults(handler=_create)

    listing = sub.add_parser("list", parents=[common], help="list banks")
    listing.add_argument(
        "--type", choices=["conversation", "general"], help="only banks of this type"
    )
    listing.set_defaults(handler=_list)

    for name, handler, text in (
        ("show", _show, "show one bank"),
        ("delete", _delete, "delete a bank and all its entries"),
        ("reset-source", _reset, "delete every entry; the bank config stays"),
    ):
        command = sub.add_parser(name, parents=[common], help=text)
        command.add_argument("bank", metavar="BANK", help="bank name or id")
        command.set_defaults(handler=handler)

    update = sub.add_parser("update", parents=[common], help="change a bank's settings")
    update.add_argument("bank", metavar="BANK", help="bank name or id")
    update.add_argument("--name", help="a new name")
    update.add_argument("--type", help="rejected: a bank's type is fixed at creation")
    update.add_argument("--mode", help="rejected: a bank's mode is fixed at creation")
    _settings_options(update)
    update.set_defaults(handler=_update)

    commands.add_parser("templates", parents=[common], help="list templates").set_defaults(
        handler=_templates
    )
    commands.add_parser("modes", parents=[common], help="list modes").set_defaults(handler=_modes)


def _settings_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--description", help="free text")
    parser.add_argument(
        "--compaction-prompt",
        help="instructions for summaries (without one, compaction deletes with no summary)",
    )
    parser.add_argument("--max-tokens", type=non_negative, help="0 disables")
    parser.add_argument("--max-turns", type=non_negative, help="0 disables")
    retention = parser.add_mutually_exclusive_group()
    retention.add_argument(
        "--retention-days", type=retention_days, help="7, 30, 90, 365 or any days (1 or more)"
    )
    retention.add_argument(
        "--retention-indefinite", action="store_true", help="keep entries until deleted"
    )


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name in ("name", "type", "mode", "template", "description", "compaction_prompt"):
        value = getattr(args, name, None)
        if value is not None:
            fields[name] = value
    for name in ("max_tokens", "max_turns", "retention_days"):
        value = getattr(args, name, None)
        if value is not None:
            fields[name] = value
    if args.retention_indefinite:
        fields["retention_days"] = None
    return fields


def _show_bank(args: argparse.Namespace, bank: Any) -> int:
    if args.json:
        emit_json(bank)
        return 0
    for field, value in bank.model_dump().items():
        say(f"{field:20} {'' if value is None else value}")
    return 0


def _create(args: argparse.Namespace) -> int:
    from memory.models import BankCreate
    from memory.ops import banks

    bank = banks.create(context(args), banks.CreateBank(BankCreate(**_settings(args))))
    return _show_bank(args, bank)


def _update(args: argparse.Namespace) -> int:
    from memory.models import BankUpdate
    from memory.ops import banks

    settings = _settings(args)
    if not settings:
        raise InvalidInput(
            "nothing to update: give at least one of --name, --description, "
            "--compaction-prompt, --max-tokens, --max-turns, --retention-days, "
            "--retention-indefinite"
        )
    ctx = context(args)
    bank = banks.update(ctx, banks.UpdateBank(args.bank, BankUpdate(**settings)))
    if settings.get("retention_days"):
        _warn_summaries_at_risk(ctx, bank)
    return _show_bank(args, bank)


def _warn_summaries_at_risk(ctx: Context, bank: Bank) -> None:
    """Say on stderr which compaction summaries the next retention run deletes, and why."""
    from memory.cli.compaction_cmd import summary_lines
    from memory.ops.retention import preview

    found = preview(ctx, bank)
    at_risk, cutoff = found.summaries, found.cutoff
    if not at_risk:
        return
    newer = sum(1 for s in at_risk if s.inside_window is not False)
    sys.stderr.write(
        f"membank: warning: the next retention run deletes {len(at_risk)} compaction "
        f"summaries of {bank.name!r}, {newer} of them with facts that may be inside the "
        f"new window (a summary is dated by its oldest fact):\n"
    )
    for line in summary_lines(at_risk[:20], cutoff):
        sys.stderr.write(f"  {line}\n")
    if len(at_risk) > 20:
        sys.stderr.write(f"  ... and {len(at_risk) - 20} more\n")


def _show(args: argparse.Namespace) -> int:
    from memory.agents.registry import agents_using_bank
    from memory.ops import banks

    ctx = context(args)
    bank = banks.get(ctx, args.bank)
    users = [{"id": a.id, "name": a.name} for a in agents_using_bank(ctx, bank)]
    if args.json:
        emit_json({**bank.model_dump(mode="json"), "agents": users})
        return 0
    _show_bank(args, bank)
    say(f"{'agents':20} {', '.join(a['id'] for a in users) or 'none reference this bank'}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from memory.ops import banks

    found = banks.list_banks(context(args), args.type)
    if args.json:
        emit_json(found)
        return 0
    rows = [
        (b.name, b.type, b.mode, b.max_tokens, b.max_turns, b.retention_days or "indefinite", b.id)
        for b in found
    ]
    say(table(rows, ["name", "type", "mode", "max_tokens", "max_turns", "retention", "id"]))
    return 0


def _delete(args: argparse.Namespace) -> int:
    from memory.ops import banks

    bank = banks.delete(context(args), args.bank)
    if args.json:
        emit_json({"deleted": bank})
    else:
        say(f"deleted bank {bank.name} ({bank.id}) and all its entries")
    return 0


def _reset(args: argparse.Namespace) -> int:
    from memory.ops import banks

    bank = banks.reset_source(context(args), args.bank)
    if args.json:
        emit_json({"reset": bank})
    else:
        say(f"deleted every entry of {bank.name}; storage is provisioned again on the next write")
    return 0


def _templates(args: argparse.Namespace) -> int:
    from memory.config import templates

    found = list(templates().values())
    if args.json:
        emit_json(found)
        return 0
    rows = [
        (
            t.name,
            t.type,
            t.mode,
            t.max_tokens,
            t.max_turns,
            t.retention_days or "indefinite",
            t.description,
        )
        for t in found
    ]
    say(table(rows, ["name", "type", "mode", "max_tokens", "max_turns", "retention", "about"]))
    return 0


def _modes(args: argparse.Namespace) -> int:
    from memory.config import modes

    found = list(modes().values())
    if args.json:
        emit_json(found)
        return 0
    rows = [
        (m.name, m.embedder, m.dims, m.chunk_size, m.chunk_overlap, m.description) for m in found
    ]
    say(table(rows, ["name", "embedder", "dims", "chunk_size", "overlap", "about"]))
    return 0
