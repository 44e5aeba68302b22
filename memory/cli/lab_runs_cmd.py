"""`membank lab-runs`: the saved compaction test runs (the run log): list them, open one,
diff two, star, delete, export to JSON or CSV. `--best` ranks within one entry set
(fingerprint) only."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.cli.args import context
from memory.cli.output import counted, emit_json, say, table

if TYPE_CHECKING:
    from memory.ops.lab_runs import RunDiff
    from memory.prompt_lab import TestRun


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the lab-runs command."""
    runs = commands.add_parser(
        "lab-runs", parents=[common], help="the saved compaction test runs (the run log)"
    )
    runs.add_argument("--bank", metavar="BANK", help="only runs on this bank")
    runs.add_argument(
        "--best", action="store_true", help="the best run of each entry set (fingerprint)"
    )
    runs.add_argument("--starred", action="store_true", help="only starred runs")
    act = runs.add_mutually_exclusive_group()
    act.add_argument("--delete", action="store_true", help="delete the listed runs for good")
    act.add_argument("--show", metavar="RUN", help="open one run (its id or a prefix)")
    act.add_argument("--diff", nargs=2, metavar="RUN", help="diff two runs (second minus first)")
    act.add_argument("--star", metavar="RUN", help="star a run")
    act.add_argument("--unstar", metavar="RUN", help="unstar a run")
    act.add_argument("--delete-run", metavar="RUN", help="delete one run for good")
    act.add_argument("--export", choices=["json", "csv"], help="print the listed runs as")
    runs.add_argument("--out", metavar="FILE", help="with --export: write to FILE")
    runs.set_defaults(handler=_runs)


def _runs(args: argparse.Namespace) -> int:
    from memory.ops import lab_runs

    ctx = context(args)
    if args.delete:
        deleted = lab_runs.delete_runs(ctx, bank=args.bank)
        if args.json:
            emit_json({"deleted": deleted})
        else:
            say(f"deleted {counted(deleted, 'saved run')}")
        return 0
    if args.show or args.star or args.unstar or args.delete_run:
        if args.show:
            run = lab_runs.get_run(ctx, args.show)
        elif args.delete_run:
            run = lab_runs.delete_run(ctx, args.delete_run)
        else:
            run = lab_runs.star_run(ctx, args.star or args.unstar, starred=bool(args.star))
        if args.json:
            emit_json(run)
        elif args.show:
            from memory.cli.lab_cmd import say_run

            say_run(run, "starred" if run.starred else None)
        else:
            done = "deleted" if args.delete_run else "starred" if run.starred else "unstarred"
            say(f"{done} run {run.id} ({_short(run.prompt)})")
        return 0
    if args.diff:
        diff = lab_runs.diff(ctx, *args.diff)
        if args.json:
            emit_json(diff)
        else:
            say_diff(diff)
        return 0
    found = lab_runs.list_runs(ctx, bank=args.bank)
    if args.starred:
        found = [r for r in found if r.starred]
    if args.best:
        found = sorted(
            lab_runs.best_by_fingerprint(found).values(),
            key=lambda r: r.evaluation.overall,
            reverse=True,
        )
    if args.export:
        from memory.prompt_lab.run_log import export_runs

        text = export_runs(found, args.export)
        if args.out:
            Path(args.out).write_text(text, encoding="utf-8")
            say(f"wrote {counted(len(found), 'run')} to {args.out}")
        else:
            print(text, end="")
        return 0
    if args.json:
        emit_json(found)
        return 0
    if not found:
        say("no saved test runs (run `membank test-compaction ...`)")
        return 0
    say(
        table(
            [_row(r) for r in found], ["", "time (UTC)", "overall", "set", "source", "prompt", "id"]
        )
    )
    if args.best:
        say(
            "the best run of each entry set (fingerprint): runs on other entries are never "
            "ranked together"
        )
    return 0


def _row(run: TestRun) -> tuple[str, ...]:
    from memory.prompt_lab.suite import fingerprint

    return (
        "*" if run.starred else "",
        f"{run.created_at:%Y-%m-%d %H:%M}",
        f"{run.evaluation.overall:.2f}",
        fingerprint(run.original),
        run.source_label,
        _short(run.prompt),
        run.id,
    )


def say_diff(diff: RunDiff) -> None:
    """Print a run diff: the two runs, score deltas, summary sentences, facts that moved."""
    one, two = diff.first, diff.second
    say(f"first:  {one.id}  {_short(one.prompt)}")
    say(f"second: {two.id}  {_short(two.prompt)}")
    if diff.same_entries:
        say(f"same entries (fingerprint {diff.fingerprints[0]})")
    else:
        say(
            f"other entries (fingerprints {diff.fingerprints[0]} and {diff.fingerprints[1]}): "
            "the deltas do not compare prompts"
        )
    rows = [
        (
            c.name,
            "-" if c.first is None else f"{c.first:.2f}",
            "-" if c.second is None else f"{c.second:.2f}",
            "-" if c.delta is None else f"{c.delta:+.2f}",
        )
        for c in diff.criteria
    ]
    rows.append(
        ("overall", f"{one.evaluation.overall:.2f}", f"{two.evaluation.overall:.2f}",
         f"{diff.overall_delta:+.2f}")
    )  # fmt: skip
    say(table(rows, ["criterion", "first", "second", "delta"]))
    for title, lines in (
        ("only in the first", diff.only_first),
        ("only in the second", diff.only_second),
    ):
        say(f"\nsummary sentences {title} ({len(lines)}):")
        for line in lines:
            say(f"  {line}")
    if diff.moved:
        say(f"\nplanted facts that moved ({len(diff.moved)}):")
        say(
            table(
                [(m.fact.kind, m.fact.text, m.fact.value, m.first, m.second) for m in diff.moved],
                ["kind", "fact", "value", "first", "second"],
            )
        )
    elif one.fact_diff is not None or two.fact_diff is not None:
        say("\nplanted facts: none moved")


def _short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
