"""Fixtures of the lab tests: the app in this process (AppTest) on the `ctx` fixture's storage."""

from __future__ import annotations

from pathlib import Path

import pytest
from lab_support import OpenPage
from streamlit.testing.v1 import AppTest

from lab.ui import CONTEXT_KEY
from memory.context import Context

APP = Path(__file__).resolve().parents[2] / "lab" / "app.py"


@pytest.fixture
def open_page(ctx: Context) -> OpenPage:
    """Return a function that runs the lab on `page` (e.g. "statistics") on `ctx`'s storage."""

    def open_it(page: str) -> AppTest:
        app = AppTest.from_file(str(APP), default_timeout=60)
        app.session_state[CONTEXT_KEY] = ctx
        app.run()
        if page != "banks":
            app.switch_page(f"views/{page}.py").run()
        assert not app.exception, app.exception
        return app

    return open_it
