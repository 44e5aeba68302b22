"""`kill -9` of a compacting process at every step, then a rerun: nothing lost, nothing doubled,
no deleted row left in the files and the bank's counters right (`verify` clean).

One spawned child per step, all at once (each on its own bank): a child process pays the
import of lancedb, so running them side by side keeps the test short.
"""

from __future__ import annotations

import multiprocessing
import signal

from compaction_support import (
    ExtractiveCompleter,
    assert_exactly_once,
    assert_no_loss,
    make_bank,
    write_turns,
)
from spawned import compact_and_die

from memory import banks, entries, verify
from memory.compaction.apply import STEPS, compact_partition
from memory.context import Context
from memory.models import Bank

JOURNALED = ("summary_stored", "deleted", "pruned", "saved")
"""Steps after which the summary is stored: a rerun must not summarise again."""


def _prepare(ctx: Context, step: str) -> tuple[Bank, list[str]]:
    """Return a bank whose partition `k` has a previous summary and is over its threshold."""
    bank = make_bank(ctx, name=f"crash-{step}", max_turns=6)
    write_turns(ctx, bank, "k", 7)
    compact_partition(ctx, bank, "k")
    write_turns(ctx, bank, "k", 4, start=7)
    return bank, [e.id for e in entries.load(ctx, bank, "k")]


def test_kill_9_at_each_step_then_rerun(ctx: Context) -> None:
    completer = ExtractiveCompleter()
    ctx.completer = lambda: completer
    prepared = {step: _prepare(ctx, step) for step in STEPS}
    spawn = multiprocessing.get_context("spawn")
    children = {
        step: spawn.Process(
            target=compact_and_die, args=(ctx.store.uri, ctx.account, bank.id, "k", step)
        )
        for step, (bank, _) in prepared.items()
    }
    for child in children.values():
        child.start()
    for child in children.values():
        child.join(timeout=300)
    for step, child in children.items():
        assert child.exitcode == -signal.SIGKILL, f"the child was not killed at {step}"

    for step, (bank, before) in prepared.items():
        assert_no_loss(entries.load(ctx, bank, "k"), before)
        calls = completer.calls
        result = compact_partition(ctx, bank, "k", wait=10)
        after = entries.load(ctx, bank, "k")
        assert_exactly_once(after, before)
        assert [e.kind for e in after].count("summary") == 1, step
        if step in JOURNALED:
            assert completer.calls == calls, f"summarised again after a kill at {step}"
            assert result.status == "under_threshold", step
        else:
            assert result.status == "compacted", step
        assert banks.get(ctx, bank.id).summary_count == 1, step
        health = verify.verify_bank(ctx, bank)  # nothing deleted left on disk, counters
        assert health.clean, f"{step}: {health.problems}"
