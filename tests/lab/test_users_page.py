"""The Users page in this process (AppTest: it renders, forgets, wipes) and in a real browser:
`membank lab` on 127.0.0.1 over an account with two users (memories, a chat with an agent and
its session summary), driven by Playwright in Debian's headless Chromium: see the users and
one user's layers, forget a memory, wipe the user, and see each receipt. By hand, the
README's screenshot:

    .venv/bin/python tests/lab/test_users_page.py docs/screenshots
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from lab_browser import browser_page, free_port, lab_server, open_page, settle
from lab_support import OpenPage
from playwright.sync_api import Page, expect

from memory.context import Context
from memory.ops import agents
from memory.wiring import open_context

PEANUTS = "Alice is allergic to peanuts"
WINDOW = "Please remember that I prefer window seats on flights."


def seed(data: Path) -> None:
    """Two users on the storage folder `data` (see `seed_context`)."""
    seed_context(open_context(str(data)))


def seed_context(ctx: Context) -> None:
    """Two users: alice with memories and an ended chat with `concierge`; bob with one."""
    remember = agents.RememberRequest(user="alice", content=PEANUTS, agent="concierge")
    agents.remember(ctx, remember)
    agents.remember(ctx, agents.RememberRequest(user="bob", content="Bob plays chess on Sundays"))
    chat = agents.start_chat(ctx, agents.ChatRequest(agent="concierge", user="alice"))
    agents.chat_turn(chat, WINDOW)
    agents.end_chat(ctx, chat)  # merges it into the session summary, in this process


def forget_first_memory(page: Page) -> None:
    """Forget the memory the picker shows first (the oldest: the peanut allergy)."""
    page.get_by_role("button", name="Forget memory").click()
    page.get_by_text("Forgot memory").wait_for(timeout=60_000)
    settle(page)


def wipe(page: Page, user: str) -> None:
    """Tick the confirmation and wipe the user."""
    page.get_by_text("Delete every trace of").click()
    settle(page)
    page.get_by_role("button", name="Wipe user").click()
    page.get_by_text(f"Wiped user {user!r}").wait_for(timeout=60_000)
    settle(page)


def test_the_page_says_when_there_is_no_user(open_page: OpenPage) -> None:
    app = open_page("users")
    assert not app.exception
    assert any("No user in account" in info.value for info in app.info)
    app.text_input[0].input(" ").run()
    assert not app.exception
    assert any("account must be" in error.value for error in app.error)


def test_the_page_forgets_a_memory_and_wipes_a_user(open_page: OpenPage, ctx: Context) -> None:
    seed_context(ctx)
    app = open_page("users")
    assert not app.exception
    assert app.selectbox(key="users_user").value == "alice"
    assert any(s.value == "Long-term memories" for s in app.subheader)
    app.button(key="users_forget").click().run()
    assert any("Forgot memory" in s.value and PEANUTS in s.value for s in app.success)
    left = agents.list_memories(ctx, agents.ListMemoriesRequest(user="alice")).memories
    assert PEANUTS not in [m.content for m in left]
    assert app.button(key="users_wipe").disabled
    app.checkbox(key="users_sure").check().run()
    app.button(key="users_wipe").click().run()
    assert not app.exception
    assert any("Wiped user 'alice'" in s.value for s in app.success)
    assert [u.user for u in agents.list_users(ctx).users] == ["bob"]


@pytest.mark.browser
def test_the_users_page_shows_forgets_and_wipes(tmp_path: Path) -> None:
    data = tmp_path / "db"
    seed(data)
    ctx = open_context(str(data))
    with lab_server(data, free_port()) as url, browser_page(height=1800) as page:
        page.goto(url)
        settle(page)
        open_page(page, "Users")
        users = page.get_by_test_id("stTable").first.inner_text()
        assert "alice" in users and "bob" in users and "concierge" in users
        assert page.get_by_text(PEANUTS).first.is_visible()
        assert page.get_by_text("with concierge", exact=True).is_visible()  # the session summary
        talk = page.get_by_test_id("stExpander").first
        assert "concierge" in talk.inner_text() and "turns" in talk.inner_text()
        talk.click()
        expect(page.get_by_text("window seats").first).to_be_visible()  # once it has opened
        assert not page.get_by_test_id("stException").count()
        assert not page.get_by_text("Session-state key").count()  # no stray string shown

        forget_first_memory(page)
        receipt = page.locator(".st-key-deletion_receipt").inner_text()
        assert PEANUTS in receipt
        page.screenshot(path=str(tmp_path / "users.png"), full_page=True)
        assert [
            m.content
            for m in agents.list_memories(ctx, agents.ListMemoriesRequest(user="alice")).memories
        ] == ["I prefer window seats on flights."]

        wipe(page, "alice")
        receipt = page.locator(".st-key-deletion_receipt").inner_text()
        assert "long_term" in receipt and "working" in receipt and "session" in receipt
        assert not page.get_by_test_id("stException").count()
    assert [u.user for u in agents.list_users(ctx).users] == ["bob"]
    assert agents.show_user(ctx, agents.UserRequest(user="alice")).memories == []
    assert (tmp_path / "users.png").stat().st_size > 10_000


def screenshot(out: Path) -> None:
    """Write docs/screenshots/users.png: the page after forgetting one memory."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        seed(Path(tmp) / "db")
        with lab_server(Path(tmp) / "db", free_port()) as url, browser_page(height=1700) as page:
            page.goto(url)
            settle(page)
            open_page(page, "Users")
            forget_first_memory(page)
            talk = page.get_by_test_id("stExpander").nth(1)  # the conversation's turns
            talk.click()
            talk.get_by_text("Noted (preference)").wait_for()
            settle(page)
            page.screenshot(path=str(out / "users.png"), full_page=True)


if __name__ == "__main__":
    screenshot(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
