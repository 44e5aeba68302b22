"""The data step of `membank demo`: ingest a sample file (one bad row), stats, exports.

The sample (memory/data/sample_ingest.jsonl) is copied next to the demo's data folder, so
its rejects file and the exports land in one place the user can open.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory import stats
from memory.errors import NotFound
from memory.models import Bank, BankCreate
from memory.ops import banks, transfer
from memory.transfer.ingest.report import iter_report_lines

if TYPE_CHECKING:
    from memory.context import Context

Step = Callable[[str, Any], None]
BANK = "support-tickets"
SAMPLE = "sample_ingest.jsonl"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""Before any entry the demo writes: statistics since then cover the whole bank."""


def files_dir(uri: str) -> Path:
    """Return the folder for the demo's input copy and exports (next to a local data folder)."""
    if "://" in uri:
        return Path(tempfile.mkdtemp(prefix="membank-demo-"))
    folder = Path(f"{uri.rstrip('/')}-files")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def run_data_demo(ctx: Context, uri: str, step: Step) -> None:
    """Ingest the sample file, show the bank's statistics, write JSON and Parquet exports."""
    folder = files_dir(uri)
    sample = folder / SAMPLE
    with resources.as_file(resources.files("memory").joinpath(f"data/{SAMPLE}")) as shipped:
        shutil.copyfile(shipped, sample)
    with contextlib.suppress(NotFound):
        banks.delete(ctx, BANK)
    bank = banks.create(ctx, banks.CreateBank(BankCreate(name=BANK, type="conversation")))
    report = transfer.ingest_files(ctx, transfer.IngestRequest(bank=bank.id, paths=(str(sample),)))
    quarantined = [
        f"  rejected line {r['line']}: {r['code']}: {r['reason']}"
        for f in report.files
        if f.rejects_path
        for r in map(json.loads, Path(f.rejects_path).read_text("utf-8").splitlines())
    ]
    step(
        f"ingest {sample} into {BANK} (bad rows are quarantined)",
        [*iter_report_lines(report), *quarantined],
    )

    bank = banks.get(ctx, BANK)
    since = _first_day(ctx, bank)
    frame = banks.stats(ctx, banks.StatsRequest(bank=bank.id, since=since)).stats
    step(
        f"statistics of {BANK} since {since:%Y-%m-%d} (the sample's first day)",
        stats.render(frame).splitlines(),
    )

    as_json = transfer.prepared(transfer.ExportToFile(bank=bank.id, format="json"), bank)
    guess = transfer.estimate(ctx, as_json)
    json_out = transfer.export_prepared(ctx, as_json, folder / f"{BANK}.json")
    as_parquet = transfer.prepared(transfer.ExportToFile(bank=bank.id, format="parquet"), bank)
    parquet_out = transfer.export_prepared(ctx, as_parquet, folder / f"{BANK}.parquet")
    step(
        "exports",
        [
            f"estimate before writing: {guess.entries} entries, about {guess.bytes:,} bytes",
            f"JSON ({json_out.entries} entries, {json_out.bytes:,} bytes): {json_out.path}",
            f"Parquet ({parquet_out.entries} entries, {parquet_out.bytes:,} bytes): "
            f"{parquet_out.path}",
            f"re-import with: membank import {json_out.path} --name {BANK}-copy",
        ],
    )


def _first_day(ctx: Context, bank: Bank) -> datetime:
    """Return midnight UTC of the day of the bank's oldest entry (now when it has none)."""
    every = banks.stats(ctx, banks.StatsRequest(bank=bank.id, since=EPOCH)).stats
    oldest = every.first_entry_at or ctx.clock.now()
    return oldest.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
