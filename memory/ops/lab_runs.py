"""Run log use cases: list, open, star, delete, diff and export saved compaction test runs,
and the best prompt per entry set. The CLI (`membank lab-runs`) and the lab call these."""

from __future__ import annotations

from memory.context import Context
from memory.prompt_lab import delete_runs, list_runs
from memory.prompt_lab.records import TestRun
from memory.prompt_lab.run_log import (
    ExportFormat,
    RunDiff,
    best_by_fingerprint,
    delete_run,
    diff_runs,
    export_runs,
    get_run,
    star_run,
)

__all__ = [
    "ExportFormat",
    "RunDiff",
    "best_by_fingerprint",
    "delete_run",
    "delete_runs",
    "diff",
    "export",
    "get_run",
    "list_runs",
    "star_run",
]


def diff(ctx: Context, first: str, second: str) -> RunDiff:
    """Return the diff of two saved runs (ids or unique prefixes; second minus first).

    Raises:
        InvalidInput: a short or ambiguous prefix.
        NotFound: an unknown run.
    """
    return diff_runs(get_run(ctx, first), get_run(ctx, second))


def export(
    ctx: Context, fmt: ExportFormat, *, bank: str | None = None, refs: list[str] | None = None
) -> str:
    """Return the saved runs (of one bank, or the runs `refs` names) as JSON or CSV.

    Raises:
        InvalidInput: an unknown format, a short or ambiguous prefix.
        NotFound: an unknown bank or run.
    """
    runs: list[TestRun] = [get_run(ctx, ref) for ref in refs] if refs else list_runs(ctx, bank=bank)
    return export_runs(runs, fmt)
