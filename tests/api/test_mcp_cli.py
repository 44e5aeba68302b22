"""`membank mcp`: bad options are exit 2 before any server starts."""

from __future__ import annotations

import pytest
from compaction_support import run

from flows.cli import main
from memory.context import Context


def test_account_is_for_stdio_only(ctx: Context) -> None:
    code, out, err = run("mcp", "--http", "--account", "acme", context=ctx)
    assert (code, out) == (2, "")
    assert "--account is for stdio only" in err and "API key" in err


def test_a_blank_account_is_refused(ctx: Context) -> None:
    code, out, err = run("mcp", "--account", "  ", context=ctx)
    assert (code, out) == (2, "")
    assert "account must be" in err


def test_a_bad_port_is_refused(ctx: Context, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["mcp", "--http", "--port", "99999"], context=lambda data: ctx)
    assert exited.value.code == 2
    assert "port 99999 is out of range" in capsys.readouterr().err
