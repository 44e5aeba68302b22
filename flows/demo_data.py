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

from memory import banks, entries, stats
from memory.errors import NotFound
from memory.export import estimate, export
from memory.ingest import ingest
from memory.ingest.report import iter_report_lines
from memory.models import Bank, BankCreate

if TYPE_CHECKING:
    from memory.context import Context

Step = Callable[[str, Any], None]
BANK = "support-tickets"
SAMPLE = "sample_ingest.jsonl"


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
    bank = banks.create(ctx, BankCreate(name=BANK, type="conversation"))
    report = ingest(ctx, bank, [sample])
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
    frame = stats.compute(ctx, bank, since=since)
    step(
        f"statistics of {BANK} since {since:%Y-%m-%d} (the sample's first day)",
        stats.render(frame).splitlines(),
    )

    guess = estimate(ctx, bank, "json")
    json_out = export(ctx, bank, "json", folder / f"{BANK}.json")
    parquet_out = export(ctx, bank, "parquet", folder / f"{BANK}.parquet")
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
    stored = entries.read(ctx, bank)
    oldest = min((e.created_at for e in stored), default=ctx.clock.now())
    return oldest.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
