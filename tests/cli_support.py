"""The set-up the CLI tests of export, import and ingest share: `membank` run in this process
on the test's context (import `cli_fixture`; tests ask for `cli`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memory.cli import main
from memory.context import Context

Cli = Callable[[list[str]], int]
"""Run `membank ARGS` on the test's context; returns the exit code."""


@pytest.fixture(name="cli")
def cli_fixture(ctx: Context) -> Cli:
    """`membank` on the test's context (its output is in capsys)."""

    def run(argv: list[str]) -> int:
        return main(argv, context=lambda data: ctx)

    return run
