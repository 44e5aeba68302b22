"""The run log: open, star, delete, diff and export saved runs; best prompt per entry set;
the same from `membank lab-runs`."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from compaction_support import make_bank, run, write_turns

from memory.clock import FixedClock
from memory.context import Context
from memory.errors import InvalidInput, NotFound
from memory.ops import lab_runs
from memory.prompt_lab import BankSource, PastedSource, SyntheticSource, TestRun, run_test
from memory.prompt_lab.run_log import CSV_COLUMNS
from memory.store import filters

KEEP = "Keep names, numbers, dates and preferences."
DROP = "Write one short sentence. Drop all numbers and names."
SYNTH = SyntheticSource(description="support chats about late deliveries", count=20, seed=3)
PASTED = "user: order 4411 broke\nassistant: a new one ships May 3, 2026\nuser: thanks\n"


@pytest.fixture
def pair(ctx: Context, clock: FixedClock) -> tuple[TestRun, TestRun]:
    first = run_test(ctx, SYNTH, prompt=KEEP)
    clock.advance(timedelta(minutes=1))
    second = run_test(ctx, SYNTH, prompt=DROP)
    return first, second


def test_a_diff_shows_score_deltas_summary_sentences_and_facts_that_moved(
    ctx: Context, pair: tuple[TestRun, TestRun]
) -> None:
    first, second = pair

    diff = lab_runs.diff(ctx, first.id, second.id[:8])

    assert diff.same_entries and diff.fingerprints[0] == diff.fingerprints[1]
    assert diff.overall_delta == pytest.approx(
        second.evaluation.overall - first.evaluation.overall, abs=1e-4
    )
    coverage = next(c for c in diff.criteria if c.name == "fact_coverage")
    assert coverage.first == first.evaluation.criterion("fact_coverage").score
    assert coverage.delta is not None and coverage.delta < 0  # B drops what A keeps
    assert diff.only_first and all(s in " ".join(first.summary.split()) for s in diff.only_first)
    # the label line is no sentence: it was highlighted as one only the first summary had
    assert not any("[extractive summary]" in s for s in diff.only_first + diff.only_second)
    assert first.fact_diff is not None and second.fact_diff is not None
    moved = {m.fact.value: (m.first, m.second) for m in diff.moved}
    lost = {f.value for f in first.fact_diff.kept} - {f.value for f in second.fact_diff.kept}
    assert lost and all(moved[v][0] == "kept" and moved[v][1] != "kept" for v in lost)


def test_runs_on_other_entries_diff_but_say_so_and_rank_apart(
    ctx: Context, pair: tuple[TestRun, TestRun]
) -> None:
    other = run_test(ctx, PastedSource(text=PASTED), prompt=DROP)

    diff = lab_runs.diff(ctx, pair[0].id, other.id)
    best = lab_runs.best_by_fingerprint(lab_runs.list_runs(ctx))

    assert not diff.same_entries
    assert len(best) == 2  # one best run per entry set, never pooled
    synthetic = max(pair, key=lambda r: r.evaluation.overall)
    assert {r.id for r in best.values()} == {synthetic.id, other.id}


def test_star_keeps_the_run_and_its_entry_copies_delete_removes_one(ctx: Context) -> None:
    bank = make_bank(ctx)
    write_turns(ctx, bank, "c-1", 4)

    stored = run_test(ctx, BankSource(bank="chat"), prompt=KEEP)
    pasted = run_test(ctx, PastedSource(text=PASTED), prompt=KEEP)

    starred = lab_runs.star_run(ctx, stored.id[:6])

    assert starred.starred and lab_runs.get_run(ctx, stored.id) == starred
    assert lab_runs.star_run(ctx, stored.id, starred=False).starred is False
    assert lab_runs.delete_run(ctx, pasted.id).id == pasted.id
    assert [r.id for r in lab_runs.list_runs(ctx)] == [stored.id]
    # the starred run still records its entry copies: deleting an entry deletes it
    assert ctx.store.delete_lab_copies(ctx.account, bank.id, filters.equals("key", "c-1")) == 1
    assert lab_runs.list_runs(ctx) == []


def test_a_bad_run_reference_is_a_clear_error(ctx: Context) -> None:
    saved = run_test(ctx, PastedSource(text=PASTED), prompt=KEEP)
    other = Context(store=ctx.store, account="globex", clock=ctx.clock, embedder=ctx.embedder)

    with pytest.raises(InvalidInput, match="at least 6"):
        lab_runs.get_run(ctx, saved.id[:3])
    with pytest.raises(NotFound, match="no saved run"):
        lab_runs.get_run(ctx, "ffffffffff")
    with pytest.raises(NotFound):  # another account's run is not found either
        lab_runs.star_run(other, saved.id)
    assert lab_runs.get_run(ctx, saved.id).starred is False


def test_export_json_holds_whole_runs_and_csv_one_row_each(
    ctx: Context, pair: tuple[TestRun, TestRun]
) -> None:
    records = json.loads(lab_runs.export(ctx, "json"))
    rows = list(csv.DictReader(io.StringIO(lab_runs.export(ctx, "csv"))))

    assert [TestRun.model_validate(r) for r in records] == [pair[1], pair[0]]
    assert list(rows[0]) == CSV_COLUMNS
    assert [r["id"] for r in rows] == [pair[1].id, pair[0].id]
    assert float(rows[1]["overall"]) == pytest.approx(pair[0].evaluation.overall, abs=1e-4)
    assert rows[0]["summary"] == pair[1].summary
    with pytest.raises(InvalidInput, match="json or csv"):
        lab_runs.export(ctx, "xml")  # type: ignore[arg-type]


def test_the_cli_opens_diffs_stars_exports_and_deletes_runs(
    ctx: Context, pair: tuple[TestRun, TestRun], tmp_path: Path
) -> None:
    first, second = pair

    code, out, err = run("lab-runs", "--diff", first.id[:8], second.id[:8], context=ctx)
    assert code == 0, err
    assert "same entries (fingerprint" in out and "fact_coverage" in out
    assert "planted facts that moved" in out
    code, out, _ = run("lab-runs", "--star", first.id[:8], context=ctx)
    assert (code, out.strip()) == (0, f"starred run {first.id} ({KEEP})")
    code, out, _ = run("lab-runs", "--starred", context=ctx)
    assert first.id in out and second.id not in out
    code, out, _ = run("lab-runs", "--show", first.id, context=ctx)
    assert "starred prompt: " + KEEP in out and first.summary.split("\n")[0] in out
    code, out, _ = run("lab-runs", "--best", context=ctx)
    assert out.count("synthetic") == 1 and "never ranked together" in out
    target = tmp_path / "runs.csv"
    code, out, _ = run("lab-runs", "--export", "csv", "--out", str(target), context=ctx)
    assert code == 0 and len(list(csv.DictReader(target.open()))) == 2
    code, out, _ = run("lab-runs", "--delete-run", second.id, context=ctx)
    assert code == 0 and [r.id for r in lab_runs.list_runs(ctx)] == [first.id]
    code, _, err = run("lab-runs", "--show", "abc", context=ctx)
    assert code == 2 and "at least 6" in err
    code, _, err = run("lab-runs", "--show", "ffffffff", context=ctx)
    assert code == 3 and "no saved run" in err
