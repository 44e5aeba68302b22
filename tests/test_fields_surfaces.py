"""One end-to-end check per surface that the field rules reach: the CLI exits 2, the write
refuses poison metadata before anything is stored."""

from __future__ import annotations

from typing import Any

import pytest

from memory import banks, entries
from memory.cli import main
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import BankCreate, EntryIn
from memory.types.fields import MAX_JSON_DEPTH, MAX_RETENTION_DAYS


def test_cli_bank_update_refuses_a_bad_retention_with_exit_2(
    ctx: Context, capsys: pytest.CaptureFixture[str]
) -> None:
    banks.create(ctx, BankCreate(name="notes", type="general", retention_days=30))
    with pytest.raises(SystemExit) as exited:  # argparse's own refusal
        main(["bank", "update", "notes", "--retention-days", "0"], context=lambda _: ctx)
    assert exited.value.code == 2 and "use 1 or more days" in capsys.readouterr().err
    too_long = ["bank", "update", "notes", "--retention-days", str(MAX_RETENTION_DAYS + 1)]
    assert main(too_long, context=lambda _: ctx) == 2
    assert f"retention_days must be 1-{MAX_RETENTION_DAYS} days" in capsys.readouterr().err
    assert banks.get(ctx, "notes").retention_days == 30


def test_cli_search_refuses_an_empty_time_window_with_exit_2(
    ctx: Context, capsys: pytest.CaptureFixture[str]
) -> None:
    banks.create(ctx, BankCreate(name="notes", type="general"))
    frame = ["--since", "2026-11-21T00:00", "--until", "2026-11-21T00:00"]
    assert main(["search", "notes", "x", *frame], context=lambda _: ctx) == 2
    assert "the time frame is empty" in capsys.readouterr().err


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"x": float("nan")}, "NaN or Infinity"),
        ({"x": [float("inf")]}, "NaN or Infinity"),
        (_nested(256), f"nested more than {MAX_JSON_DEPTH} levels"),
    ],
)
def test_a_write_refuses_metadata_it_could_not_read_back(
    ctx: Context, metadata: dict[str, Any], message: str
) -> None:
    bank = banks.create(ctx, BankCreate(name="notes", type="general"))
    with pytest.raises(InvalidInput, match=message):
        entries.write(ctx, bank, [EntryIn(key="k", content="c", metadata=metadata)])
    assert entries.load(ctx, bank, key="k") == []
