"""Helpers shared by the lab tests."""

from __future__ import annotations

from collections.abc import Callable

from streamlit.testing.v1 import AppTest

OpenPage = Callable[[str], AppTest]
"""Runs the lab on a page ("banks", "statistics", ...) and returns the app under test."""
