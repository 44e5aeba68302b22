"""`membank ingest | export | import | stats`: moving data in and out, and bank statistics.

`ingest` exits 0 when every row was stored or already present, and 4 when it finished but
rejected rows (they are in the rejects file; every good row is stored). 4 is not 2: the
command was used correctly and did its work, yet a script must be able to tell that some
rows need fixing. Progress bars go to stderr, only when stderr is a terminal.
"""

from __future__ import annotations

import argparse
from typing import Any

from memory.cli.args import (
    SINCE_HELP,
    UNTIL_HELP,
    add_tag_filter,
    context,
    positive,
    time_range,
)
from memory.cli.output import counted, emit_json, progress_bar, say

EXIT_REJECTED = 4
"""Exit code of an ingest that finished but quarantined rows in a rejects file."""


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the ingest, export, import and stats commands."""
    ingest = commands.add_parser(
        "ingest", parents=[common], help="ingest JSONL / CSV / Parquet files or folders"
    )
    ingest.add_argument(
        "paths", metavar="PATH", nargs="+", help="JSONL, CSV or Parquet files (or folders)"
    )
    ingest.add_argument("--bank", required=True, metavar="BANK", help="bank name or id")
    ingest.add_argument(
        "--rejects", metavar="PATH", help="one rejects file (default: <input>.rejects.jsonl)"
    )
    ingest.add_argument("--batch-size", type=positive, default=512, help="rows per commit")
    ingest.add_argument(
        "--on-conflict",
        choices=["reject", "update"],
        default="reject",
        help="a row whose id is stored with another key or content: reject it (id_conflict, "
        "the default) or update the stored entry (its old version is deleted for good)",
    )
    ingest.set_defaults(handler=_ingest)

    export = commands.add_parser("export", parents=[common], help="export a bank (JSON, Parquet)")
    export.add_argument("bank", metavar="BANK", help="bank name or id")
    export.add_argument(
        "--format", choices=["json", "parquet"], required=True, help="file format to write"
    )
    export.add_argument(
        "--out", metavar="PATH", help="file (or folder with --partition-by); not stdout"
    )
    export.add_argument("--key", help="only this partition")
    export.add_argument("--since", help=SINCE_HELP)
    export.add_argument("--until", help=UNTIL_HELP)
    export.add_argument("--speaker", help="only this speaker's entries")
    add_tag_filter(export)
    export.add_argument("--estimate", action="store_true", help="count and size, write nothing")
    export.add_argument("--with-vectors", action="store_true", help="Parquet: chunk vectors")
    export.add_argument("--partition-by", choices=["date", "key"], help="Parquet: a folder")
    export.set_defaults(handler=_export)

    importer = commands.add_parser(
        "import", parents=[common], help="create a bank from a JSON export"
    )
    importer.add_argument("path", metavar="PATH", help="a JSON export made by `membank export`")
    importer.add_argument("--name", help="the new bank's name (default: the exported name)")
    importer.set_defaults(handler=_import)

    stats = commands.add_parser("stats", parents=[common], help="a bank's entry statistics")
    stats.add_argument("bank", metavar="BANK", help="bank name or id")
    stats.add_argument("--days", type=positive, help="the last N days, 1 or more (default 30)")
    stats.add_argument("--since", help=SINCE_HELP)
    stats.add_argument("--until", help=UNTIL_HELP)
    stats.add_argument(
        "--top", type=positive, default=10, help="rows per breakdown table, 1 or more (default 10)"
    )
    stats.set_defaults(handler=_stats)


def _ingest(args: argparse.Namespace) -> int:
    from memory.ops import transfer
    from memory.transfer.ingest.report import iter_report_lines

    request = transfer.IngestRequest(
        bank=args.bank,
        paths=tuple(args.paths),
        rejects=args.rejects,
        batch_size=args.batch_size,
        on_conflict=args.on_conflict,
    )
    ctx = context(args)
    with progress_bar(None, " rows") as progress:
        report = transfer.ingest_files(ctx, request, progress)
    if args.json:
        emit_json({**report.model_dump(mode="json"), "totals": report.totals()})
    else:
        for line in iter_report_lines(report):
            say(line)
    return EXIT_REJECTED if report.rejected else 0


def _export(args: argparse.Namespace) -> int:
    from memory.errors import InvalidInput
    from memory.ops import transfer

    since, until = time_range(args.since, args.until)
    flt = transfer.ExportFilters(
        key=args.key, speaker=args.speaker, tags=args.tags, since=since, until=until
    )
    if not args.estimate and not args.out:
        raise InvalidInput("--out PATH is required (or use --estimate to only count)")
    if not args.estimate and args.out == "-":
        raise InvalidInput(
            "--out - (stdout) is not supported: give a file path, e.g. --out bank.json"
        )
    request = transfer.ExportToFile(
        bank=args.bank,
        format=args.format,
        out=args.out,
        filters=flt,
        with_vectors=args.with_vectors,
        partition_by=args.partition_by,
    )
    ctx = context(args)
    prepared = transfer.prepare_export(ctx, request)
    if args.estimate:
        guess = transfer.estimate(ctx, prepared)
        if args.json:
            emit_json(guess)
        else:
            say(f"{_entries(guess.entries)}, about {_human(guess.bytes)} ({guess.note})")
        return 0
    with progress_bar(transfer.count_entries(ctx, prepared), " entries") as progress:
        result = transfer.export_prepared(ctx, prepared, progress=progress)
    if args.json:
        emit_json(result)
    else:
        files = f" in {counted(result.files, 'file')}" if result.partition_by else ""
        say(f"exported {_entries(result.entries)} to {result.path} ({_human(result.bytes)}{files})")
    return 0


def _import(args: argparse.Namespace) -> int:
    from memory.ops import transfer

    request = transfer.ImportRequest(path=args.path, name=args.name)
    with progress_bar(None, " entries") as progress:
        report = transfer.import_file(context(args), request, progress)
    if args.json:
        emit_json(report)
    else:
        say(
            f"imported {_entries(report.entries)} "
            f"({counted(report.summaries, 'compaction summary', 'compaction summaries')}) "
            f"from {report.source_bank!r} into new bank {report.bank.name} ({report.bank.id})"
        )
    return 0


def _stats(args: argparse.Namespace) -> int:
    from memory import stats
    from memory.ops import banks

    since, until = time_range(args.since, args.until)
    ctx = context(args)
    since, until = stats.time_frame(ctx.clock.now(), days=args.days, since=since, until=until)
    request = banks.StatsRequest(bank=args.bank, since=since, until=until, top=args.top)
    result = banks.stats(ctx, request).stats
    if args.json:
        emit_json(result)
    else:
        say(stats.render(result))
    return 0


def _entries(count: int) -> str:
    return counted(count, "entry", "entries")


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{size} B"
