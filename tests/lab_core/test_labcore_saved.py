"""Saved test runs (newest first, per bank, per account) and two prompts on the same entries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from compaction_support import make_bank, write_turns

from memory import banks, entries, retention
from memory.clock import FixedClock
from memory.context import Context
from memory.errors import InvalidInput, NotFound
from memory.prompt_lab import (
    BankSource,
    PastedSource,
    SyntheticSource,
    compare,
    delete_runs,
    list_runs,
    run_test,
)
from memory.store.lance import LanceStore
from memory.testing import ScriptedCompleter

PASTED = "user: order 4411 broke\nassistant: a new one ships May 3, 2026\nuser: thanks\n"


def test_runs_are_saved_and_listed_newest_first(ctx: Context, clock: FixedClock) -> None:
    bank = make_bank(ctx)
    write_turns(ctx, bank, "c-1", 4)
    first = run_test(ctx, PastedSource(text=PASTED), prompt="Keep order numbers.")
    clock.advance(timedelta(minutes=5))
    second = run_test(ctx, BankSource(bank="chat"), prompt="Keep dates.")
    clock.advance(timedelta(minutes=5))
    run_test(ctx, PastedSource(text=PASTED), prompt="unsaved", save=False)

    listed = list_runs(ctx)

    assert [r.id for r in listed] == [second.id, first.id]
    assert listed == [second, first]  # the whole record comes back
    assert [r.id for r in list_runs(ctx, bank="chat")] == [second.id]
    assert [r.id for r in list_runs(ctx, bank=bank.id)] == [second.id]
    best = sorted(listed, key=lambda r: r.evaluation.overall, reverse=True)
    assert {r.id for r in best} == {first.id, second.id}


def test_runs_are_scoped_to_their_account(ctx: Context) -> None:
    run_test(ctx, PastedSource(text=PASTED), prompt="Keep order numbers.")
    other = Context(store=ctx.store, account="globex", clock=ctx.clock, embedder=ctx.embedder)

    assert list_runs(other) == []
    assert len(list_runs(ctx)) == 1
    with pytest.raises(NotFound):
        list_runs(other, bank="chat")


def test_delete_runs_removes_them_for_good(ctx: Context) -> None:
    bank = make_bank(ctx)
    write_turns(ctx, bank, "c-1", 3)
    kept = run_test(ctx, PastedSource(text=PASTED), prompt="Keep order numbers.")
    run_test(ctx, BankSource(bank="chat"), prompt="Keep dates.")

    assert delete_runs(ctx, bank="chat") == 1

    assert [r.id for r in list_runs(ctx)] == [kept.id]
    assert delete_runs(ctx) == 1
    assert list_runs(ctx) == []


def test_compare_runs_two_prompts_on_the_same_entries(ctx: Context) -> None:
    completer = ScriptedCompleter().enqueue("Order 4411 broke.", "A new one ships May 3, 2026.")
    ctx.completer = lambda: completer
    source = SyntheticSource(description="support", count=12, seed=2)

    a, b = compare(ctx, source, ("Keep numbers.", "Keep dates."), runs=2, save=True)

    assert (a.prompt, b.prompt) == ("Keep numbers.", "Keep dates.")
    assert a.original == b.original and a.surviving == b.surviving
    assert (a.summary, b.summary) == ("Order 4411 broke.", "A new one ships May 3, 2026.")
    first, second = (call[-1].content for call in completer.calls)
    assert first.replace("Keep numbers.", "P") == second.replace("Keep dates.", "P")
    assert a.evaluation.runs == b.evaluation.runs == 2
    assert {r.id for r in list_runs(ctx)} == {a.id, b.id}


def test_compare_checks_both_prompts_before_running(ctx: Context) -> None:
    completer = ScriptedCompleter()
    ctx.completer = lambda: completer

    with pytest.raises(InvalidInput, match="compaction prompt is empty"):
        compare(ctx, PastedSource(text=PASTED), ("Keep numbers.", " "))

    assert completer.calls == []
    assert list_runs(ctx) == []


def _versions(ctx: Context) -> int:
    store = ctx.store
    assert isinstance(store, LanceStore)
    return len(store._lab_runs(create=False).list_versions())


def test_forgetting_an_entry_deletes_the_runs_holding_a_copy(ctx: Context) -> None:
    bank = make_bank(ctx)
    first = write_turns(ctx, bank, "c-1", 3)
    write_turns(ctx, bank, "c-2", 3, start=10)
    on_c1 = run_test(ctx, BankSource(bank="chat", key="c-1"), prompt="Keep orders.")
    on_c2 = run_test(ctx, BankSource(bank="chat", key="c-2"), prompt="Keep orders.")
    pasted = run_test(ctx, PastedSource(text=PASTED), prompt="Keep orders.")

    entries.forget(ctx, bank, first[1].id)

    assert {r.id for r in list_runs(ctx)} == {on_c2.id, pasted.id}
    assert on_c1.id not in {r.id for r in list_runs(ctx)}
    assert _versions(ctx) == 1  # pruned: the copy is gone from old versions too


def test_retention_deletes_runs_holding_an_expired_entry(ctx: Context, clock: FixedClock) -> None:
    bank = make_bank(ctx, retention_days=7)
    write_turns(ctx, bank, "old", 3)
    clock.advance(timedelta(days=5))
    write_turns(ctx, bank, "new", 3, start=10)
    on_old = run_test(ctx, BankSource(bank="chat", key="old"), prompt="Keep orders.")
    on_new = run_test(ctx, BankSource(bank="chat", key="new"), prompt="Keep orders.")
    clock.advance(timedelta(days=3))

    result = retention.apply_retention(ctx, banks.get(ctx, bank.id))

    assert result.deleted == 3
    assert [r.id for r in list_runs(ctx)] == [on_new.id]
    assert on_old.id not in {r.id for r in list_runs(ctx)}


def test_compacting_entries_deletes_the_runs_holding_a_copy(ctx: Context) -> None:
    bank = make_bank(ctx, max_turns=4)
    write_turns(ctx, bank, "c-1", 4)
    write_turns(ctx, bank, "c-2", 3, start=10)
    on_c1 = run_test(ctx, BankSource(bank="chat", key="c-1"), prompt="Keep orders.")
    on_c2 = run_test(ctx, BankSource(bank="chat", key="c-2"), prompt="Keep orders.")

    write_turns(ctx, bank, "c-1", 1, start=4, compact=True)  # over max_turns: compacts c-1

    assert entries.load(ctx, bank, "c-1")[0].kind == "summary"
    assert [r.id for r in list_runs(ctx)] == [on_c2.id]
    assert on_c1.id not in {r.id for r in list_runs(ctx)}


@pytest.mark.parametrize("action", [banks.delete, banks.reset_source])
def test_deleting_a_bank_or_its_source_deletes_its_runs(ctx: Context, action: object) -> None:
    bank = make_bank(ctx)
    write_turns(ctx, bank, "c-1", 3)
    run_test(ctx, BankSource(bank="chat"), prompt="Keep orders.")
    pasted = run_test(ctx, PastedSource(text=PASTED), prompt="Keep orders.")

    action(ctx, bank.id)  # type: ignore[operator]

    assert [r.id for r in list_runs(ctx)] == [pasted.id]
