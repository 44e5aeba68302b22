"""Drive `membank lab` in a real headless Chromium: the browser test's driver, and by hand the
README's screenshots:

    .venv/bin/python tests/lab/lab_browser.py docs/screenshots

It starts the console script on a free port of 127.0.0.1 on a fresh storage folder, waits for
/_stcore/health (bounded), and after every action waits for Streamlit's connection and
script-state attributes (never for network idle: the websocket stays open).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from playwright.sync_api import Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

CHROMIUM = "/usr/bin/chromium"
READY = "[data-testid='stApp'][data-test-connection-state='CONNECTED']"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
RUNNING = "[data-testid='stApp'][data-test-script-state='running']"
RERUN_START_MS = 1_500
HEALTH_SECONDS = 60.0
PASTED = """ann: Hi, my order 4471 arrived broken.
bob: Sorry Ann. I can send a replacement by Friday 12 June.
ann: Yes please, and refund the 15 dollar shipping fee.
bob: Done: replacement for order 4471 ships Friday, 15 dollars refunded.
ann: Thanks Bob, that works for me."""
COPIES = 8
"""Times the sample conversations are copied (under other keys) for the statistics shot."""
PROMPT = "Keep order numbers, dates, amounts and what was promised."
SUPPORT_CHAT = """Dana: Hi, my order 48213 arrived damaged on March 3.
Agent: Sorry to hear that. I can refund 120 dollars or send a replacement.
Dana: Please send a replacement to my office in Leeds.
Agent: Done, the replacement ships on March 5 with tracking number 99812.
Dana: The box also had a broken hinge, which is annoying.
Agent: I have opened a ticket about the hinge and our manager Priya will call you.
Dana: Thanks, bye!"""
PROMPT_A = (
    "Summarize this support conversation history. Keep the customer's issues, what was "
    "tried, resolutions, commitments made (with dates and numbers) and open questions. Drop "
    "greetings and small talk."
)
PROMPT_B = "Write one short sentence. Drop all numbers and names."


def free_port() -> int:
    """Return a TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def membank_script() -> str:
    """Return the path of the `membank` console script of this environment."""
    here = Path(sys.executable).parent / "membank"
    found = here if here.exists() else shutil.which("membank")
    if found is None:
        raise RuntimeError("the membank console script is not installed: run `uv sync`")
    return str(found)


@contextmanager
def lab_server(data: Path, port: int) -> Iterator[str]:
    """Run `membank lab` on `data` and yield its URL once healthy; stop its process group."""
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    process = subprocess.Popen(
        [membank_script(), "--data", str(data), "lab", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


def _wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + HEALTH_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read().decode() if process.stderr else ""
            raise RuntimeError(f"membank lab exited with {process.returncode}: {err[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"membank lab was not healthy within {HEALTH_SECONDS:.0f} s")


def settle(page: Page) -> None:
    """Wait until the app is connected and its script has finished running.

    An action's rerun may not have started yet when this is called: wait briefly for it to
    start, so the idle state seen afterwards is the rerun's end, not the state before it.
    """
    page.wait_for_selector(READY, timeout=60_000)
    with suppress(PlaywrightTimeout):  # it already finished, or the action started none
        page.wait_for_selector(RUNNING, timeout=RERUN_START_MS)
    page.wait_for_selector(IDLE, timeout=120_000)


@contextmanager
def browser_page(height: int = 1000) -> Iterator[Page]:
    """Yield a page of Debian's headless Chromium (never a downloaded browser)."""
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": height})
            yield page
        finally:
            browser.close()


_ONE_INPUT_WITH = """([label, value]) => {
    const found = document.querySelectorAll(`input[aria-label="${label}"]`);
    return found.length === 1 && found[0].value === value;
}"""


def wait_for_input_value(page: Page, label: str, value: str) -> None:
    """Wait until the page shows one input labelled `label`, holding `value`.

    Until a rerun ends, a widget keyed by an old value of another widget stays on the page
    next to its replacement, and a Playwright locator matching both fails at once (strict
    mode) rather than waiting: this waits for the page's state as a whole.
    """
    page.wait_for_function(_ONE_INPUT_WITH, arg=[label, value], timeout=120_000)


def open_page(page: Page, title: str) -> None:
    """Open the lab page named `title` in the sidebar navigation."""
    page.get_by_role("link", name=title).first.click()
    settle(page)


def run_pasted_test(page: Page, url: str) -> None:
    """Paste entries, run a compaction test and wait for its summary and scores."""
    page.goto(url)
    settle(page)
    open_page(page, "Test compaction")
    page.get_by_text("Pasted entries", exact=True).click()
    settle(page)
    page.get_by_role("textbox", name="Entries (one per line)").fill(PASTED)
    page.get_by_role("textbox", name="Compaction prompt").fill(PROMPT)
    page.keyboard.press("Tab")
    settle(page)
    page.get_by_role("button", name="Run test").click()
    page.get_by_text("Best prompt so far").wait_for(timeout=120_000)  # the page's last part
    settle(page)


def create_bank(page: Page, url: str, name: str) -> None:
    """Create a bank from scratch on the Banks page."""
    page.goto(url)
    settle(page)
    page.get_by_label("Name").first.fill(name)
    page.keyboard.press("Tab")
    settle(page)
    page.get_by_role("button", name="Create", exact=True).click()
    settle(page)
    page.get_by_text(f"Created bank {name!r}").wait_for()


def seed(data: Path) -> None:
    """Fill `data` with the sample support conversations, spread over the last 30 days."""
    import json
    from datetime import timedelta
    from importlib import resources

    from memory import banks, entries
    from memory.models import BankCreate, EntryIn
    from memory.wiring import open_context

    ctx = open_context(str(data))
    bank = banks.create(ctx, BankCreate(name="support-history", template="customer-support"))
    sample = json.loads(
        resources.files("memory").joinpath("data/sample_conversations.json").read_text()
    )
    now = ctx.clock.now()
    rows = [
        EntryIn(
            key=f"{conversation['key']}-{copy}",
            speaker=speaker,
            role=role,
            content=text,
            tags=["billing"] if any(c.isdigit() for c in text) else ["chat"],
            created_at=now - timedelta(days=(copy * 5 + n * 3) % 28 + i / 10, hours=copy),
        )
        for copy in range(COPIES)
        for n, conversation in enumerate(sample["conversations"])
        for i, (speaker, role, text) in enumerate(conversation["turns"][: 3 + copy % 5])
    ]
    entries.write(ctx, bank, rows)


def check_run_diff(page: Page) -> None:
    """After "Compare with prompt B": the run log diffs the two saved runs (A first, the
    older), the sentences only one summary has highlighted, the overall delta shown."""
    page.get_by_text("Diff two runs").scroll_into_view_if_needed()
    first = page.locator("[class*='st-key-diff_first_']")
    second = page.locator("[class*='st-key-diff_second_']")
    assert "48213" in first.inner_text() and "48213" not in second.inner_text()
    assert first.locator("mark").count() >= 1 and second.locator("mark").count() >= 1
    deltas = page.get_by_test_id("stTable").last.inner_text()
    assert "overall" in deltas and "fact_coverage" in deltas


def diff_shot(page: Page, out: Path) -> None:
    """Screenshot the run log's diff of the two compared runs."""
    page.get_by_text("Diff two runs").scroll_into_view_if_needed()
    page.get_by_text("Run log", exact=True).scroll_into_view_if_needed()
    box = page.get_by_text("Run log", exact=True).bounding_box()
    top = int(box["y"]) if box else 0
    page.screenshot(
        path=str(out / "test-compaction-diff.png"),
        clip={"x": 0, "y": max(0, top - 20), "width": 1400, "height": 1500},
    )


def compare_shots(page: Page, out: Path) -> None:
    """Prompts A and B on the same pasted chat (offline: different summaries), then a suite
    of 10 keys x 3 rounds on the sample bank (`seed`)."""
    page.get_by_role("textbox", name="Entries (one per line)").fill(SUPPORT_CHAT)
    page.get_by_role("textbox", name="Compaction prompt").fill(PROMPT_A)
    page.keyboard.press("Tab")
    settle(page)
    page.get_by_text("Judge, thresholds and a second prompt").click()
    page.get_by_role("textbox", name="Prompt B (to compare with the prompt above)").fill(PROMPT_B)
    page.keyboard.press("Tab")
    settle(page)
    page.get_by_role("button", name="Compare with prompt B").click()
    page.get_by_text("Prompt B:").first.wait_for(timeout=120_000)
    settle(page)
    page.get_by_text("Prompt A:").first.scroll_into_view_if_needed()
    page.screenshot(path=str(out / "test-compaction-compare.png"), full_page=True)
    check_run_diff(page)
    diff_shot(page, out)
    page.get_by_text("Bank entries", exact=True).click()
    settle(page)
    page.get_by_role("textbox", name="Compaction prompt").fill(PROMPT_A)
    page.keyboard.press("Tab")
    settle(page)
    page.get_by_role("button", name="Run suite").click()
    page.get_by_text("entry set fingerprint").wait_for(timeout=300_000)
    settle(page)
    page.get_by_text("Suite: the prompts over many cases").scroll_into_view_if_needed()
    page.screenshot(path=str(out / "test-compaction-suite.png"))


def screenshots(out: Path) -> None:
    """Write the README's screenshots to `out`, one per page, from a lab on sample data."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        seed(Path(tmp) / "db")
        with lab_server(Path(tmp) / "db", free_port()) as url, browser_page(height=1500) as page:
            page.goto(url)
            settle(page)
            page.get_by_label("Template").first.click()
            page.get_by_role("option", name="meeting-notes").click()
            settle(page)
            page.screenshot(path=str(out / "banks.png"))
            open_page(page, "Statistics")
            page.screenshot(path=str(out / "statistics.png"))
            page.set_viewport_size({"width": 1400, "height": 2000})
            run_pasted_test(page, url)
            page.screenshot(path=str(out / "test-compaction.png"))
            compare_shots(page, out)
            page.set_viewport_size({"width": 1400, "height": 1300})
            open_page(page, "AI assistant")
            page.get_by_label("Describe what the bank will hold").fill(
                "stores daily customer interactions, about 50 messages per day per customer"
            )
            page.keyboard.press("Tab")
            settle(page)
            page.get_by_role("button", name="Propose").click()
            settle(page)
            page.get_by_text("Proposal", exact=True).wait_for()
            page.get_by_role("button", name="Test this prompt").click()
            page.get_by_text("Test of the proposed prompt").wait_for(timeout=120_000)
            settle(page)
            page.screenshot(path=str(out / "assistant.png"))


if __name__ == "__main__":
    screenshots(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
