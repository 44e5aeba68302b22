"""`membank compact | retention`: compaction and retention now (`serve` runs them on a schedule)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from memory.cli.args import context
from memory.cli.output import emit_json, say, table

if TYPE_CHECKING:
    from datetime import datetime

    from memory.models import Bank
    from memory.ops.compaction import CompactionResult
    from memory.ops.retention import ExpiredSummary, RetentionResult


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the compaction and retention commands."""
    compact = commands.add_parser(
        "compact", parents=[common], help="compact a bank's partitions over a threshold now"
    )
    compact.add_argument("bank", metavar="BANK", help="bank name or id")
    compact.add_argument("--key", help="only this partition (also finishes an interrupted run)")
    compact.set_defaults(handler=_compact)

    keep = commands.add_parser(
        "retention", parents=[common], help="delete entries older than the retention now"
    )
    target = keep.add_mutually_exclusive_group(required=True)
    target.add_argument("bank", metavar="BANK", nargs="?", help="bank name or id")
    target.add_argument("--all", action="store_true", help="every bank of the account")
    keep.set_defaults(handler=_retention)


def _compact(args: argparse.Namespace) -> int:
    from memory.cli.output import progress_bar
    from memory.ops.compaction import CompactNow, compact_now

    ctx = context(args)
    with progress_bar(None, " partitions") as progress:
        done = compact_now(ctx, CompactNow(args.bank, args.key), progress)
    bank, results = done.bank, done.partitions
    failed = [r for r in results if r.status == "failed"]
    idle = _nothing_done(bank, args.key, results)
    if args.json:
        emit_json(results)
    elif idle is not None:
        say(idle)
    else:
        rows = [
            (r.key, r.status, "; ".join(r.reasons), r.covered, r.kept, r.recovered, r.error or "")
            for r in results
        ]
        say(table(rows, ["key", "status", "over", "covered", "kept", "recovered", "error"]))
        if any(r.status == "irreducible" for r in results):
            say(
                "irreducible: over a threshold with only the newest entry (always kept verbatim) "
                "and summaries left; it compacts once more entries arrive"
            )
        _say_summaries(bank.name, [r for r in results if r.summary is not None])
    for r in failed:
        sys.stderr.write(f"membank: compaction of {r.key!r} failed, entries kept: {r.error}\n")
    return 1 if failed else 0


def _nothing_done(bank: Bank, key: str | None, results: list[CompactionResult]) -> str | None:
    """Return why nothing was compacted, or None when some partition was worked on."""
    if any(r.status != "under_threshold" or r.recovered for r in results):
        return None
    if key is not None and not any(r.entries_before for r in results):
        return f"{bank.name}: no entries under key {key!r}: nothing to compact"
    if not bank.max_tokens and not bank.max_turns:
        return (
            f"{bank.name}: the bank has no max_tokens/max_turns: it never compacts "
            "(set one with `membank bank update`)"
        )
    if not results:
        return f"{bank.name}: no partition is over its thresholds"
    return None


def _say_summaries(bank_name: str, done: list[CompactionResult]) -> None:
    """Print one summary in full, or the first line of each when there are several."""
    if len(done) == 1:
        (r,) = done
        say(f"\nsummary of {r.key!r} ({r.summarizer}):\n{r.summary}")
        return
    if not done:
        return
    say(f"\nsummaries ({done[0].summarizer}; full text: membank load {bank_name} --key K):")
    rows = [(r.key, _one_line(r.summary or "")) for r in done]
    say(table(rows, ["key", "summary"]))


def _one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _retention(args: argparse.Namespace) -> int:
    from memory.cli.output import progress_bar
    from memory.ops import retention

    # one bank: its error is the command's (exit 2 for a missing mode); --all reports each
    request = retention.RetentionRequest(bank=None if args.all else args.bank)
    with progress_bar(None, " banks") as progress:
        results = retention.apply(context(args), request, progress)
    failed = [r for r in results if r.status == "failed"]
    if args.json:
        emit_json(results)
    else:
        _say_retention(results)
    for r in failed:
        sys.stderr.write(f"membank: retention of bank {r.bank_name!r} failed: {r.error}\n")
    return 1 if failed else 0


def _say_retention(results: list[RetentionResult]) -> None:
    rows = [
        (
            r.bank_name,
            f"{r.retention_days} days" if r.retention_days else "indefinite",
            r.status,
            r.deleted,
            f"{r.cutoff:%Y-%m-%d %H:%M}" if r.cutoff else "",
        )
        for r in results
    ]
    say(table(rows, ["bank", "retention", "status", "deleted", "cutoff (UTC)"]))
    for r in results:
        for line in summary_lines(r.summaries, r.cutoff):
            say(f"{r.bank_name}: {line}")


def summary_lines(summaries: list[ExpiredSummary], cutoff: datetime | None) -> list[str]:
    """Return one line per compaction summary retention deletes (or would), saying why."""
    lines = []
    for s in summaries:
        covers = f" of {s.covers} entries" if s.covers else ""
        if s.inside_window:
            newer = f"; it also held facts up to {s.newest_fact_at:%Y-%m-%d}, inside the window"
        elif s.inside_window is None:
            newer = "; how new its other facts were is not recorded"
        else:
            newer = ""
        when = f" {cutoff:%Y-%m-%d}" if cutoff else ""
        lines.append(
            f"summary {s.id} (key {s.key!r}){covers} goes: it is dated by its oldest fact, "
            f"{s.created_at:%Y-%m-%d}, before the cutoff{when}{newer}"
        )
    return lines
