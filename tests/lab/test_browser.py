"""The lab in a real browser: `membank lab` (the console script) on 127.0.0.1, driven by
Playwright in Debian's headless Chromium: create a bank, paste entries, run a compaction test,
and see the summary and the judge's scores."""

from __future__ import annotations

from pathlib import Path

from lab_browser import browser_page, create_bank, free_port, lab_server, run_pasted_test

from memory import banks
from memory.judge import HEURISTIC_LABEL
from memory.prompt_lab import list_runs
from memory.wiring import open_context


def test_a_compaction_test_on_pasted_entries_in_the_browser(tmp_path: Path) -> None:
    data = tmp_path / "db"
    with lab_server(data, free_port()) as url, browser_page(height=2400) as page:
        create_bank(page, url, "help-desk")
        page.screenshot(path=str(tmp_path / "banks.png"))
        run_pasted_test(page, url)
        page.screenshot(path=str(tmp_path / "test-compaction.png"))
        summary = page.locator("[class*='st-key-summary_']").first.inner_text()
        surviving = page.locator("[class*='st-key-surviving_']").first.inner_text()
        assert page.get_by_text("Overall score").is_visible()
        score = page.get_by_test_id("stMetricValue").first.inner_text()
        criteria = page.get_by_test_id("stTable").first.inner_text()
        assert page.get_by_text(HEURISTIC_LABEL).first.is_visible()
    ctx = open_context(str(data))
    [run] = list_runs(ctx)  # the run the page showed, as saved
    assert " ".join(summary.split()) == " ".join(run.summary.split())
    assert "Thanks Bob, that works for me." in surviving  # the newest entry, kept verbatim
    assert score == f"{run.evaluation.overall:.2f}"
    assert run.evaluation.criteria and all(c.name in criteria for c in run.evaluation.criteria)
    assert (tmp_path / "test-compaction.png").stat().st_size > 10_000
    assert [b.name for b in banks.list_banks(ctx)] == ["help-desk"]
