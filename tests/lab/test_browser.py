"""The lab in a real browser: `membank lab` (the console script) on 127.0.0.1, driven by
Playwright in Debian's headless Chromium: create a bank, paste entries, run a compaction test,
and see the summary and the judge's scores."""

from __future__ import annotations

from pathlib import Path

from lab_browser import (
    PROMPT_A,
    PROMPT_B,
    SUPPORT_CHAT,
    browser_page,
    check_run_diff,
    create_bank,
    free_port,
    lab_server,
    open_page,
    run_pasted_test,
    settle,
    wait_for_input_value,
)
from playwright.sync_api import Page, expect

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
        check_a_failed_run_shows_its_error_alone(page)
    ctx = open_context(str(data))
    [run] = list_runs(ctx)  # the run the page showed, as saved
    assert " ".join(summary.split()) == " ".join(run.summary.split())
    assert "Thanks Bob, that works for me." in surviving  # the newest entry, kept verbatim
    assert score == f"{run.evaluation.overall:.2f}"
    assert run.evaluation.criteria and all(c.name in criteria for c in run.evaluation.criteria)
    assert (tmp_path / "test-compaction.png").stat().st_size > 10_000
    assert [b.name for b in banks.list_banks(ctx)] == ["help-desk"]


def check_a_failed_run_shows_its_error_alone(page: Page) -> None:
    """An unknown judge model: the error at once, and the result before it gone."""
    if not page.get_by_label(JUDGE_LABEL).is_visible():
        page.get_by_text("Judge, thresholds and a second prompt").click()
    page.get_by_label(JUDGE_LABEL).fill("gpt-5-turbo")
    page.keyboard.press("Tab")
    settle(page)
    page.get_by_role("button", name="Run test").click()
    settle(page)
    error = page.get_by_test_id("stAlertContentError").first
    error.wait_for(timeout=60_000)
    assert "unknown model 'gpt-5-turbo'" in error.inner_text()
    expect(page.get_by_text("Overall score")).not_to_be_visible()


JUDGE_LABEL = "Judge model (any litellm name; empty: the heuristic judge, offline)"


def check_our_navigation_and_wide_layout(page: Page) -> None:
    """The lab's own navigation (not Streamlit's list of files) and the wide layout."""
    links = page.get_by_test_id("stSidebarNav").get_by_role("link").all_inner_texts()
    assert links == ["Banks", "Test compaction", "Statistics", "AI assistant", "Users"]
    main = page.get_by_test_id("stMain").bounding_box()
    block = page.get_by_test_id("stMainBlockContainer").bounding_box()
    assert main is not None and block is not None
    assert block["width"] >= 0.95 * main["width"]  # wide: centred is at most 736 px of 1,100


def test_a_cold_deep_link_then_accept_applies_to_the_bank_on_screen(tmp_path: Path) -> None:
    from memory.models import BankCreate

    data = tmp_path / "db"
    ctx = open_context(str(data))
    for name in ("alpha", "beta"):
        banks.create(ctx, BankCreate(name=name, type="conversation", retention_days=30))
    with lab_server(data, free_port()) as url, browser_page(height=1600) as page:
        # a fresh server's first request is a deep link: the page as the app shows it
        page.goto(f"{url}/assistant")
        settle(page)
        page.get_by_role("heading", name="AI assistant").wait_for()
        check_our_navigation_and_wide_layout(page)
        page.get_by_label("Describe what the bank will hold").fill(
            "short-term session context, cleaned up weekly"
        )
        page.keyboard.press("Tab")
        settle(page)
        page.get_by_text("An existing bank").click()
        settle(page)
        page.get_by_role("button", name="Propose").click()
        settle(page)
        page.get_by_text("Proposal", exact=True).wait_for()
        page.get_by_label("Bank", exact=True).first.click()  # switch from alpha to beta
        page.get_by_role("option", name="beta (conversation)").click()
        settle(page)
        expect(page.get_by_text("Accept applies it to the bank shown, 'beta'")).to_be_visible()
        page.get_by_role("button", name="Accept (apply to 'beta')").click()
        settle(page)
        page.get_by_text("Applied the proposal to bank 'beta'").wait_for()
    after = open_context(str(data))
    assert banks.get(after, "alpha").retention_days == 30  # the bank not on screen is untouched
    assert banks.get(after, "beta").compaction_prompt


def test_compare_and_a_suite_in_the_browser(tmp_path: Path) -> None:
    from memory.models import BankCreate

    data = tmp_path / "db"
    banks.create(
        open_context(str(data)), BankCreate(name="big", type="conversation", max_tokens=8000)
    )
    with lab_server(data, free_port()) as url, browser_page(height=3000) as page:
        page.goto(url)
        settle(page)
        open_page(page, "Test compaction")
        page.get_by_text("Judge, thresholds and a second prompt").click()
        max_size = page.get_by_label("Max size (tokens, 0 = off)")
        expect(max_size).to_have_value("8000")  # the bank's
        page.get_by_text("Pasted entries", exact=True).click()
        settle(page)
        wait_for_input_value(page, "Max size (tokens, 0 = off)", "0")  # not the bank's
        page.get_by_role("textbox", name="Entries (one per line)").fill(SUPPORT_CHAT)
        page.get_by_role("textbox", name="Compaction prompt").fill(PROMPT_A)
        page.keyboard.press("Tab")
        settle(page)
        prompt_b = page.get_by_role("textbox", name="Prompt B (to compare with the prompt above)")
        if not prompt_b.is_visible():  # the expander opened above may be open still
            page.get_by_text("Judge, thresholds and a second prompt").click()
        prompt_b.fill(PROMPT_B)
        page.keyboard.press("Tab")
        settle(page)
        page.get_by_role("button", name="Compare with prompt B").click()
        page.get_by_text("Prompt B:").first.wait_for(timeout=120_000)
        settle(page)
        summaries = page.locator("[class*='st-key-summary_']")
        first, second = summaries.nth(0).inner_text(), summaries.nth(1).inner_text()
        assert first != second and "48213" in first and "48213" not in second
        assert page.get_by_text("How the offline extractive stand-in followed").first.is_visible()
        check_run_diff(page)
        page.get_by_role("button", name="Run suite").click()
        page.get_by_text("entry set fingerprint").wait_for(timeout=120_000)
        settle(page)
        page.screenshot(path=str(tmp_path / "suite.png"))
