"""The run log: open one saved run, star it, delete it, diff two runs, export runs, and rank
prompts within one entry set (fingerprint), never across sets.

A run is named by its id or a unique prefix of it (at least `MIN_PREFIX` characters), as the
CLI prints it. A diff pairs the two summaries, the score deltas per criterion (second minus
first) and the planted facts whose status moved (kept, dropped, contradicted); runs on other
entries can be diffed too, and the diff says they are not comparable.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from memory.errors import InvalidInput, NotFound
from memory.judge import CRITERIA
from memory.judge.text import sentences, summary_lines
from memory.prompt_lab.records import FactDiff, PlantedFact, TestRun
from memory.prompt_lab.suite import fingerprint

if TYPE_CHECKING:
    from memory.context import Context

MIN_PREFIX = 6
ExportFormat = Literal["json", "csv"]
FactStatus = Literal["kept", "dropped", "contradicted", "absent"]
"""`absent`: the fact is not planted in that run's entries."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CriterionDelta(_Record):
    """One criterion's score in both runs (None: not scored there) and the change."""

    name: str
    first: float | None
    second: float | None
    delta: float | None


class FactMove(_Record):
    """A planted fact whose status differs between the two runs."""

    fact: PlantedFact
    first: FactStatus
    second: FactStatus


class RunDiff(_Record):
    """Two saved runs side by side."""

    first: TestRun
    second: TestRun
    same_entries: bool
    """Both runs are on the same entries (fingerprint): only then do the deltas compare
    prompts."""
    fingerprints: tuple[str, str]
    overall_delta: float
    criteria: list[CriterionDelta]
    only_first: list[str]
    """Summary sentences of the first run the second does not have."""
    only_second: list[str]
    moved: list[FactMove]


def _runs(ctx: Context) -> list[TestRun]:
    return [TestRun.model_validate_json(b) for b in ctx.store.lab_run_bodies(ctx.account)]


def get_run(ctx: Context, ref: str) -> TestRun:
    """Return the account's saved run `ref` (its id, or a unique prefix of it).

    Raises:
        InvalidInput: a prefix shorter than MIN_PREFIX, or one that names several runs.
        NotFound: no saved run of this account has that id.
    """
    ref = ref.strip()
    if len(ref) < MIN_PREFIX:
        raise InvalidInput(
            f"run {ref!r}: give the run's id or at least {MIN_PREFIX} of its first characters "
            "(`membank lab-runs` lists them)"
        )
    found = [r for r in _runs(ctx) if r.id.startswith(ref)]
    exact = [r for r in found if r.id == ref]
    if exact:
        return exact[0]
    if not found:
        raise NotFound(f"no saved run {ref!r} in this account: `membank lab-runs` lists them")
    if len(found) > 1:
        raise InvalidInput(f"run {ref!r} names {len(found)} runs: give more of its id")
    return found[0]


def star_run(ctx: Context, ref: str, *, starred: bool = True) -> TestRun:
    """Star (or unstar) a saved run; returns it as saved now.

    Raises:
        InvalidInput, NotFound: as `get_run`.
    """
    run = get_run(ctx, ref).model_copy(update={"starred": starred})
    if not ctx.store.update_lab_run_body(ctx.account, run.id, run.model_dump_json()):
        raise NotFound(f"saved run {run.id!r} was deleted meanwhile")
    return run


def delete_run(ctx: Context, ref: str) -> TestRun:
    """Delete one saved run for good (old versions too); returns what it was.

    Raises:
        InvalidInput, NotFound: as `get_run`.
    """
    run = get_run(ctx, ref)
    ctx.store.delete_lab_run(ctx.account, run.id)
    return run


def best_by_fingerprint(runs: Sequence[TestRun]) -> dict[str, TestRun]:
    """Return the best-scoring run of each entry set (fingerprint); runs on other entries are
    never ranked together."""
    best: dict[str, TestRun] = {}
    for run in runs:
        key = fingerprint(run.original)
        if key not in best or run.evaluation.overall > best[key].evaluation.overall:
            best[key] = run
    return best


def fact_statuses(diff: FactDiff | None) -> dict[tuple[str, str, str], FactStatus]:
    """Return each planted fact's status in a run, keyed by (kind, subject, value)."""
    if diff is None:
        return {}
    found: dict[tuple[str, str, str], FactStatus] = {}
    for status, facts in (
        ("kept", diff.kept),
        ("dropped", diff.dropped),
        ("contradicted", diff.contradicted),
    ):
        for fact in facts:
            found[(fact.kind, fact.text, fact.value)] = status  # type: ignore[assignment]
    return found


def _scores(run: TestRun) -> dict[str, float]:
    return {c.name: c.score for c in run.evaluation.criteria if not c.error}


def _sentences(text: str) -> list[str]:
    """Return the summary's sentences, line by line, without label lines ("[extractive
    summary]" is no sentence of either summary, so never one only one of them has)."""
    return [" ".join(s.split()) for row in summary_lines(text) for s in sentences(row)]


def diff_runs(first: TestRun, second: TestRun) -> RunDiff:
    """Return the diff of two runs (second minus first)."""
    prints = (fingerprint(first.original), fingerprint(second.original))
    a, b = _scores(first), _scores(second)
    names = [n for n in (*CRITERIA, *a, *b) if n in a or n in b]
    criteria = [
        CriterionDelta(
            name=name,
            first=a.get(name),
            second=b.get(name),
            delta=round(b[name] - a[name], 4) if name in a and name in b else None,
        )
        for name in dict.fromkeys(names)
    ]
    one, two = _sentences(first.summary), _sentences(second.summary)
    was, now = fact_statuses(first.fact_diff), fact_statuses(second.fact_diff)
    facts = {
        key: fact
        for run in (first, second)
        if run.fact_diff is not None
        for fact in (*run.fact_diff.kept, *run.fact_diff.dropped, *run.fact_diff.contradicted)
        for key in [(fact.kind, fact.text, fact.value)]
    }
    moved = [
        FactMove(fact=fact, first=was.get(key, "absent"), second=now.get(key, "absent"))
        for key, fact in facts.items()
        if was.get(key, "absent") != now.get(key, "absent")
    ]
    return RunDiff(
        first=first,
        second=second,
        same_entries=prints[0] == prints[1],
        fingerprints=prints,
        overall_delta=round(second.evaluation.overall - first.evaluation.overall, 4),
        criteria=criteria,
        only_first=[s for s in one if s not in two],
        only_second=[s for s in two if s not in one],
        moved=moved,
    )


CSV_COLUMNS = [
    "id",
    "created_at",
    "starred",
    "bank",
    "source",
    "fingerprint",
    "prompt",
    "summarizer",
    "judge",
    "overall",
    *CRITERIA,
    "compression_ratio",
    "facts_kept",
    "facts_dropped",
    "facts_contradicted",
    "summary",
]


def export_runs(runs: Sequence[TestRun], fmt: ExportFormat) -> str:
    """Return runs as JSON (a list of whole run records) or CSV (one row per run: scores,
    fact counts, the summary; `CSV_COLUMNS`).

    Raises:
        InvalidInput: an unknown format.
    """
    if fmt == "json":
        return json.dumps([r.model_dump(mode="json") for r in runs], indent=2) + "\n"
    if fmt != "csv":
        raise InvalidInput(f"export format {fmt!r}: choose json or csv")
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for run in runs:
        diff = run.fact_diff
        scores = _scores(run)
        writer.writerow(
            {
                "id": run.id,
                "created_at": run.created_at.isoformat(),
                "starred": run.starred,
                "bank": run.bank or "",
                "source": run.source_label,
                "fingerprint": fingerprint(run.original),
                "prompt": run.prompt,
                "summarizer": run.summarizer,
                "judge": run.evaluation.judge,
                "overall": f"{run.evaluation.overall:.4f}",
                **{n: f"{scores[n]:.4f}" if n in scores else "" for n in CRITERIA},
                "compression_ratio": f"{run.evaluation.compression_ratio:.4f}",
                "facts_kept": len(diff.kept) if diff else "",
                "facts_dropped": len(diff.dropped) if diff else "",
                "facts_contradicted": len(diff.contradicted) if diff else "",
                "summary": run.summary,
            }
        )
    return out.getvalue()
