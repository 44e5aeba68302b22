"""Retention tells which compaction summaries it deletes and why, and `bank update
--retention-days` warns before it happens (a summary is dated by its oldest fact)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from datetime import timedelta

from memory import banks, entries
from memory.cli import main
from memory.clock import FixedClock
from memory.compaction.bank import compact_bank
from memory.context import Context
from memory.models import BankCreate, EntryIn


def _cli(ctx: Context, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args), context=lambda _data: ctx)
    return code, out.getvalue(), err.getvalue()


def _compacted(ctx: Context, clock: FixedClock) -> None:
    spec = BankCreate(name="s", type="conversation", compaction_prompt="Keep facts.", max_turns=3)
    bank = banks.create(ctx, spec)
    now = clock.now()
    for days, text in [(200, "ticket 4411 opened"), (100, "refund of 30 euros"), (10, "moved")]:
        item = EntryIn(key="c", speaker="Dana", content=text, created_at=now - timedelta(days))
        entries.write(ctx, bank, [item])
    entries.write(ctx, bank, [EntryIn(key="c", speaker="Dana", content="thanks, all good")])
    compact_bank(ctx, bank)
    summaries = [e for e in entries.load(ctx, bank, "c") if e.kind == "summary"]
    assert len(summaries) == 1  # positive control: the oldest turns are in one summary


def test_update_warns_and_retention_names_each_summary_and_why(
    ctx: Context, clock: FixedClock
) -> None:
    _compacted(ctx, clock)
    code, _, err = _cli(ctx, "bank", "update", "s", "--retention-days", "150")
    assert code == 0
    assert "warning" in err and "1 compaction summaries" in err
    assert "inside the window" in err

    code, out, _ = _cli(ctx, "retention", "s")
    assert code == 0
    (line,) = [line for line in out.splitlines() if "summary " in line]
    assert "dated by its oldest fact" in line and "inside the window" in line

    code, out, _ = _cli(ctx, "--json", "retention", "s")
    assert json.loads(out)[0]["summaries"] == []  # already gone: nothing more to say


def test_no_warning_when_no_summary_expires(ctx: Context, clock: FixedClock) -> None:
    _compacted(ctx, clock)
    code, _, err = _cli(ctx, "bank", "update", "s", "--retention-days", "365")
    assert (code, err) == (0, "")
