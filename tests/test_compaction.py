"""Compaction applied to a real LanceDB: summary first, journaled recovery, stats, inline hook."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from compaction_support import (
    ExtractiveCompleter,
    assert_exactly_once,
    assert_no_loss,
    make_bank,
    turn,
    user_write,
    write_turns,
)

from memory import banks, entries, purge, search
from memory.clock import FixedClock
from memory.compaction.apply import (
    STEPS,
    compact_partition,
    finish_bank,
    reconcile,
    recovery_deletions,
)
from memory.compaction.bank import compact_bank
from memory.compaction.plan import summary_budget
from memory.context import Context
from memory.errors import ProviderError
from memory.models import SUMMARY_TAG, Entry, EntryIn, SearchQuery
from memory.ops import entries as ops_entries
from memory.store.locks import partition_lock
from memory.testing import ScriptedCompleter

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def scripted(ctx: Context) -> ScriptedCompleter:
    """A scripted completer installed in the context."""
    completer = ScriptedCompleter(model="scripted/test")
    ctx.completer = lambda: completer
    return completer


@pytest.fixture
def extractive(ctx: Context) -> ExtractiveCompleter:
    """The offline extractive summarizer installed in the context."""
    completer = ExtractiveCompleter()
    ctx.completer = lambda: completer
    return completer


def test_summary_replaces_oldest_and_keeps_newest(
    ctx: Context, clock: FixedClock, extractive: ExtractiveCompleter
) -> None:
    bank = make_bank(ctx, max_turns=10)
    written = write_turns(ctx, bank, "k", 11)
    clock.advance(timedelta(hours=1))
    result = compact_partition(ctx, bank, "k")
    assert result.status == "compacted", result.error
    assert result.reasons == ["max_turns: 11 > 10"]
    after = entries.load(ctx, bank, "k")
    summary = after[0]
    assert summary.kind == "summary"
    assert SUMMARY_TAG in summary.tags
    assert summary.speaker == "compaction-summary"
    assert summary.summary_of == [e.id for e in written[:7]]
    assert [e.id for e in after[1:]] == [e.id for e in written[7:]]
    assert summary.content.startswith("[extractive summary]")
    assert "extractive" in summary.metadata["summarizer"]
    assert "#1000" in summary.content  # numbers survive verbatim
    assert len(after) <= 10 // 2
    stored = banks.get(ctx, bank.id)
    assert stored.summary_count == 1
    assert stored.last_compaction_at == clock.now()
    assert extractive.calls == 1


def test_previous_summary_is_carried_into_the_next(
    ctx: Context, scripted: ScriptedCompleter
) -> None:
    bank = make_bank(ctx, max_turns=4)
    write_turns(ctx, bank, "k", 5)
    scripted.enqueue("alice ordered #1000 and #1001")
    first = compact_partition(ctx, bank, "k")
    write_turns(ctx, bank, "k", 4, start=5)
    scripted.enqueue("alice ordered #1000 to #1008")
    second = compact_partition(ctx, bank, "k")
    assert second.status == "compacted"
    prompt = scripted.calls[-1][-1].content
    assert "<previous_summary>\nalice ordered #1000 and #1001\n</previous_summary>" in prompt
    after = entries.load(ctx, bank, "k")
    summaries = [e for e in after if e.kind == "summary"]
    assert [s.content for s in summaries] == ["alice ordered #1000 to #1008"]
    assert first.summary_id in summaries[0].summary_of
    assert banks.get(ctx, bank.id).summary_count == 1


@pytest.mark.parametrize(
    "failure",
    [
        ProviderError("model unavailable"),
        TimeoutError("timed out after 60s"),
        "",
        "   \n",
        "[extractive summary]\n",
        "word " * 2000,  # far over the budget: unusable
    ],
    ids=["error", "timeout", "empty", "blank", "label-only", "over-budget"],
)
def test_summary_first_nothing_deleted_on_failure(
    ctx: Context, scripted: ScriptedCompleter, failure: object
) -> None:
    bank = make_bank(ctx, max_turns=4, max_tokens=400)
    written = write_turns(ctx, bank, "k", 6)
    scripted.enqueue(failure)  # type: ignore[arg-type]
    result = compact_partition(ctx, bank, "k")
    assert result.status == "failed"
    assert result.error
    after = entries.load(ctx, bank, "k")
    assert [e.id for e in after] == [e.id for e in written]
    assert banks.get(ctx, bank.id).summary_count == 0
    # the next write retries and succeeds
    scripted.enqueue("alice ordered things")
    user_write(ctx, bank, [EntryIn(key="k", speaker="bob", content="and one more")])
    final = entries.load(ctx, bank, "k")
    assert [e.kind for e in final].count("summary") == 1
    assert_exactly_once(final, [e.id for e in after])


def test_failed_inline_compaction_does_not_fail_the_write(
    ctx: Context, scripted: ScriptedCompleter
) -> None:
    bank = make_bank(ctx, max_turns=2)
    write_turns(ctx, bank, "k", 2)
    scripted.enqueue(ProviderError("down"))
    (written,) = user_write(ctx, bank, [EntryIn(key="k", speaker="a", content="third")])
    assert written.id in {e.id for e in entries.load(ctx, bank, "k")}
    assert len(entries.load(ctx, bank, "k")) == 3


def test_inline_compaction_runs_after_each_write(
    ctx: Context, extractive: ExtractiveCompleter
) -> None:
    bank = make_bank(ctx, max_turns=6)
    for index in range(20):
        user_write(ctx, bank, [EntryIn(key="k", speaker="a", content=f"fact {index}")])
        assert len(entries.load(ctx, bank, "k")) <= 6
    assert extractive.calls >= 2
    other = make_bank(ctx, name="untriggered")
    write_turns(ctx, other, "k", 30, compact=True)
    assert len(entries.load(ctx, other, "k")) == 30


def test_one_write_over_several_keys_compacts_exactly_the_partitions_it_took_over(
    ctx: Context, extractive: ExtractiveCompleter
) -> None:
    bank = make_bank(ctx, max_turns=6)
    for key in ("a", "b", "c"):
        write_turns(ctx, bank, key, 5)
    batch = [
        EntryIn(key=key, speaker="x", content=f"more on {key} {i}") for key in "ab" for i in (1, 2)
    ]
    batch.append(EntryIn(key="d", speaker="x", content="a new partition"))
    result = ops_entries.write(ctx, ops_entries.WriteRequest(bank=bank.id, items=batch))
    assert [(r.key, r.status) for r in result.compacted] == [("a", "compacted"), ("b", "compacted")]
    assert len(entries.load(ctx, bank, "a")) <= 6 and len(entries.load(ctx, bank, "b")) <= 6
    assert len(entries.load(ctx, bank, "c")) == 5 and len(entries.load(ctx, bank, "d")) == 1


def test_no_prompt_drops_overflow_without_calling_a_model(
    ctx: Context, scripted: ScriptedCompleter
) -> None:
    bank = make_bank(ctx, max_turns=10, compaction_prompt=None)
    written = write_turns(ctx, bank, "k", 11)
    result = compact_partition(ctx, bank, "k")
    assert result.status == "dropped"
    assert scripted.calls == []
    after = entries.load(ctx, bank, "k")
    assert [e.id for e in after] == [e.id for e in written[6:]]
    assert all(e.kind == "entry" for e in after)


def test_compaction_prunes_old_versions_and_search_forgets(
    ctx: Context, scripted: ScriptedCompleter
) -> None:
    bank = make_bank(ctx, max_turns=2, compaction_prompt=None)
    ctx_entries = write_turns(ctx, bank, "k", 3)
    compact_partition(ctx, bank, "k")
    assert ctx.store.version_count(bank.id) == 1
    hits = search.search(ctx, bank, SearchQuery(text="Turn 0 order #1000", k=10))
    assert ctx_entries[0].id not in {h.entry.id for h in hits}


def test_deferred_prune_leaves_deletions_pending_until_the_bank_prune(
    ctx: Context, extractive: ExtractiveCompleter
) -> None:
    bank = make_bank(ctx, max_turns=4)
    write_turns(ctx, bank, "k", 6)
    assert compact_partition(ctx, bank, "k", finish=False).status == "compacted"
    assert purge.pending_deletions(ctx, bank)
    assert len(entries.load(ctx, bank, "k")) <= 2  # gone from reads already
    assert reconcile(ctx, bank)  # what the next sweep's evaluation does
    assert not purge.pending_deletions(ctx, bank)
    assert ctx.store.version_count(bank.id) == 1


def test_a_sweeps_summaries_leave_the_deferred_prune_to_the_sweep(
    ctx: Context, extractive: ExtractiveCompleter
) -> None:
    """A summary written with finish=False does not prune the partition compacted before it
    (that made every partition of a sweep pay a prune); the bank's one prune does."""
    bank = make_bank(ctx, max_turns=4)
    for key in ("a", "b", "c"):
        write_turns(ctx, bank, key, 6)
    assert compact_partition(ctx, bank, "a", finish=False).status == "compacted"
    after_first = ctx.store.version_count(bank.id)
    for key in ("b", "c"):
        assert compact_partition(ctx, bank, key, finish=False).status == "compacted"
    assert ctx.store.version_count(bank.id) > after_first  # no prune in between
    assert purge.pending_deletions(ctx, bank)
    purge.prune(ctx, bank)
    assert not purge.pending_deletions(ctx, bank)
    assert ctx.store.version_count(bank.id) == 1
    assert all(len(entries.load(ctx, bank, key)) <= 2 for key in ("a", "b", "c"))


def test_a_sweeps_compactions_leave_the_counters_to_the_banks_finish(
    ctx: Context, extractive: ExtractiveCompleter
) -> None:
    """With finish=False no partition writes the bank's counters (a registry commit every
    worker of a sweep made per partition); `finish_bank` stores them once, then prunes."""
    bank = make_bank(ctx, max_turns=4)
    for key in ("a", "b", "c"):
        write_turns(ctx, bank, key, 6)
    for key in ("a", "b", "c"):
        assert compact_partition(ctx, bank, key, finish=False).status == "compacted"
    stored = banks.get(ctx, bank.name)
    assert stored.summary_count == 0 and stored.last_compaction_at is None
    finish_bank(ctx, stored)
    finished = banks.get(ctx, bank.name)
    assert finished.summary_count == 3 and finished.last_compaction_at is not None
    assert not purge.pending_deletions(ctx, bank)


def test_partitions_are_independent(ctx: Context, extractive: ExtractiveCompleter) -> None:
    bank = make_bank(ctx, max_turns=5)
    write_turns(ctx, bank, "over", 8)
    write_turns(ctx, bank, "under", 5)
    evil = "x' OR '1'='1"
    write_turns(ctx, bank, evil, 9)
    results = compact_bank(ctx, bank)
    assert sorted(r.key for r in results) == sorted(["over", evil])
    assert all(r.status == "compacted" for r in results)
    assert len(entries.load(ctx, bank, "under")) == 5
    assert len(entries.load(ctx, bank, evil)) <= 5
    assert banks.get(ctx, bank.id).summary_count == 2


def test_general_bank_summary_has_no_speaker(ctx: Context, extractive: ExtractiveCompleter) -> None:
    bank = make_bank(ctx, name="facts", type="general", max_tokens=200)
    write_turns(ctx, bank, "user-1", 12)
    result = compact_partition(ctx, bank, "user-1")
    assert result.status == "compacted"
    (summary,) = [e for e in entries.load(ctx, bank, "user-1") if e.kind == "summary"]
    assert summary.speaker is None and summary.tags == [SUMMARY_TAG]
    assert result.tokens_after <= 200


def test_summary_is_dated_like_its_oldest_entry_and_keeps_tags_and_type(
    ctx: Context, clock: FixedClock, extractive: ExtractiveCompleter
) -> None:
    bank = make_bank(ctx, name="prefs", type="general", max_turns=4)
    items = []
    for index in range(6):
        item = turn("u", index, None)
        item.memory_type = "preference"
        item.tags = ["pref", f"t{index % 2}"]
        item.created_at = clock.now() - timedelta(days=10 - index)
        items.append(item)
    written = entries.write(ctx, bank, items)
    assert compact_partition(ctx, bank, "u").status == "compacted"
    summary, *kept = entries.load(ctx, bank, "u")
    assert summary.kind == "summary"
    assert summary.created_at == written[0].created_at  # retention sees the oldest information
    assert summary.tags == [SUMMARY_TAG, "pref", "t0", "t1"]
    assert summary.memory_type == "preference"
    assert summary.created_at < kept[0].created_at


def test_busy_partition_is_skipped_inline(ctx: Context, scripted: ScriptedCompleter) -> None:
    bank = make_bank(ctx, max_turns=2)
    write_turns(ctx, bank, "k", 3)
    with partition_lock(ctx.store.uri, bank.id, "k", timeout=0) as held:
        assert held
        result = compact_partition(ctx, bank, "k", wait=0)
        user_write(ctx, bank, [EntryIn(key="k", speaker="a", content="during")])
    assert result.status == "busy"
    assert scripted.calls == []
    assert len(entries.load(ctx, bank, "k")) == 4


@pytest.mark.parametrize("step", STEPS)
def test_interrupted_at_any_step_then_rerun_loses_nothing(
    ctx: Context, extractive: ExtractiveCompleter, step: str
) -> None:
    bank = make_bank(ctx, max_turns=6)
    write_turns(ctx, bank, "k", 4)
    compact_partition(ctx, bank, "k", wait=0)  # under threshold: nothing
    write_turns(ctx, bank, "k", 3, start=4)
    before = [e.id for e in entries.load(ctx, bank, "k")]

    def crash(at: str) -> None:
        if at == step:
            raise KeyboardInterrupt(at)

    with pytest.raises(KeyboardInterrupt):
        compact_partition(ctx, bank, "k", checkpoint=crash)
    assert_no_loss(entries.load(ctx, bank, "k"), before)
    calls = extractive.calls
    result = compact_partition(ctx, bank, "k")
    after = entries.load(ctx, bank, "k")
    assert_exactly_once(after, before)
    assert [e.kind for e in after].count("summary") == 1
    journaled = step not in ("recovered", "planned", "summarized")
    assert extractive.calls == calls + (0 if journaled else 1)  # never summarised twice
    assert result.status == ("under_threshold" if journaled else "compacted")
    assert banks.get(ctx, bank.id).summary_count == 1


def _entry(ident: str, kind: str = "entry", summary_of: list[str] | None = None) -> Entry:
    return Entry(
        id=ident,
        bank_id="b",
        key="k",
        content=ident,
        kind=kind,  # type: ignore[arg-type]
        summary_of=summary_of or [],
        created_at=T0,
        token_count=1,
    )


def test_recovery_finishes_a_journal() -> None:
    stored = [_entry("a"), _entry("b"), _entry("s", "summary", ["a", "b"]), _entry("c")]
    assert recovery_deletions(stored) == {"a", "b"}


def test_recovery_of_a_chain_deletes_the_older_summary() -> None:
    stored = [_entry("s1", "summary", ["a"]), _entry("c"), _entry("s2", "summary", ["s1", "c"])]
    assert recovery_deletions(stored) == {"s1", "c"}


def test_recovery_drops_a_redundant_duplicate_summary() -> None:
    # the winner covered a..d and deleted them; the loser (a..c) crashed before dropping itself
    stored = [_entry("lose", "summary", ["a", "b", "c"]), _entry("win", "summary", list("abcd"))]
    assert recovery_deletions(stored) == {"lose"}


def test_recovery_keeps_a_duplicate_whose_entries_are_gone() -> None:
    # the loser covered an entry (e) the winner did not, and e is gone: keep both, lose nothing
    stored = [_entry("x", "summary", ["a", "b"]), _entry("y", "summary", ["b", "e"])]
    assert recovery_deletions(stored) == set()


def test_untriggered_bank_never_compacts(ctx: Context, scripted: ScriptedCompleter) -> None:
    bank = make_bank(ctx, max_turns=0, max_tokens=0)
    write_turns(ctx, bank, "k", 40, compact=True)
    assert compact_bank(ctx, bank) == []
    assert compact_partition(ctx, bank, "k").status == "under_threshold"
    assert len(entries.load(ctx, bank, "k")) == 40


def test_small_max_tokens_keeps_the_newest_fact_and_more_than_one_fact(
    ctx: Context, extractive: ExtractiveCompleter
) -> None:
    # each entry is 26 tokens; summary reserve 43, room for kept entries 7: none fits
    bank = make_bank(ctx, name="tok", type="general", max_tokens=100, compaction_prompt="Sum.")
    for i in range(1, 9):
        text = (
            f"Fact number {i}: the warehouse in sector {i} stores exactly {i}00 crates of blue "
            "ceramic tiles for the spring renovation project."
        )
        user_write(ctx, bank, [EntryIn(key="g", content=text)])
        stored = entries.load(ctx, bank, "g")
        assert stored[-1].kind == "entry" and stored[-1].content == text
    stored = entries.load(ctx, bank, "g")
    held = {i for i in range(1, 9) if any(f"{i}00 crates" in e.content for e in stored)}
    assert 8 in held and len(held) > 1
    summaries = [e for e in stored if e.kind == "summary"]
    assert len(summaries) == 1 and "Fact number 1:" not in summaries[0].content  # turned over


def test_tiny_budget_summaries_keep_the_facts_after_each_colon(
    ctx: Context, extractive: ExtractiveCompleter
) -> None:
    # summary budget 24 tokens: no invoice line (20-22 tokens) fits whole in it
    bank = make_bank(ctx, name="inv", type="general", max_tokens=60, compaction_prompt="Sum.")
    payees = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell"]
    payers = ["Maria", "John", "Omar", "Sara", "Ken", "Ana", "Raj", "Li"]
    for i, (payee, payer) in enumerate(zip(payees, payers, strict=True), start=1):
        text = f"Invoice {i}: paid {i * 100} dollars to {payee} on 2024-03-0{i} by {payer}"
        user_write(ctx, bank, [EntryIn(key="g", content=text)])
    (summary,) = [e for e in entries.load(ctx, bank, "g") if e.kind == "summary"]
    assert summary.token_count <= summary_budget(bank)
    # whole phrases of a recent invoice, not the leading words of the first one, frozen
    assert "…" not in summary.content and "Invoice 1:" not in summary.content
    said = summary.content.lower()  # a kept clause may start with a capital after the colon
    assert any(f"paid {i}00 dollars to {payees[i - 1]}".lower() in said for i in range(2, 9))


def test_newest_entry_alone_over_max_tokens_does_not_loop(
    ctx: Context, extractive: ExtractiveCompleter
) -> None:
    bank = make_bank(ctx, name="big", type="general", max_tokens=100, compaction_prompt="Sum.")
    user_write(ctx, bank, [EntryIn(key="g", content="small note about 42 apples")])
    huge = " ".join(f"word{n}" for n in range(200))
    user_write(ctx, bank, [EntryIn(key="g", content=huge)])  # inline: summarises the note
    stored = entries.load(ctx, bank, "g")
    assert [e.kind for e in stored] == ["summary", "entry"] and stored[1].content == huge
    calls = extractive.calls
    for _ in range(3):  # still over max_tokens, but nothing new to fold: no compaction
        (result,) = compact_bank(ctx, bank)
        assert result.status == "irreducible" and result.reasons and result.covered == 0
        # the row counts what stays: both entries
        assert result.kept == result.entries_after == result.entries_before == 2
        assert result.tokens_after == sum(e.token_count for e in stored)
    assert extractive.calls == calls
    assert [e.id for e in entries.load(ctx, bank, "g")] == [e.id for e in stored]


class _Crash(Exception):
    """Stands for a process killed at a compaction step (raised by the checkpoint hook)."""


def _crash_at(step: str) -> Callable[[str], None]:
    def hook(at: str) -> None:
        if at == step:
            raise _Crash(step)

    return hook


def test_a_drop_stopped_after_its_prune_has_its_time_saved_and_verifies_clean(
    ctx: Context, clock: FixedClock
) -> None:
    from memory import verify

    bank = make_bank(ctx, max_turns=4, compaction_prompt=None)
    write_turns(ctx, bank, "k", 6)
    # after the delete and the prune, before the stats are saved
    with pytest.raises(_Crash):
        compact_partition(ctx, bank, "k", checkpoint=_crash_at("pruned"))
    # a drop leaves no summary behind: its time was saved before the delete
    assert banks.get(ctx, bank.id).last_compaction_at == clock.now()
    assert verify.verify_bank(ctx, bank).clean


def test_a_summary_stopped_before_its_stats_are_repaired_by_the_next_run(
    ctx: Context, clock: FixedClock, extractive: ExtractiveCompleter
) -> None:
    from memory import verify

    bank = make_bank(ctx, max_turns=4)
    write_turns(ctx, bank, "k", 6)
    clock.advance(timedelta(hours=2))
    with pytest.raises(_Crash):
        compact_partition(ctx, bank, "k", checkpoint=_crash_at("pruned"))
    stale = banks.get(ctx, bank.id)
    assert (stale.summary_count, stale.last_compaction_at) == (0, None)
    health = verify.verify_bank(ctx, stale)
    assert len(health.problems) == 2, health.problems  # count and time both off
    made = clock.now()
    clock.advance(timedelta(hours=1))

    result = compact_partition(ctx, bank, "k")

    assert result.status == "under_threshold"
    repaired = banks.get(ctx, bank.id)
    assert (repaired.summary_count, repaired.last_compaction_at) == (1, made)
    assert verify.verify_bank(ctx, repaired).clean


def test_compacting_a_bank_reports_progress_per_partition(
    ctx: Context, extractive: ExtractiveCompleter
) -> None:
    """Issue 25: `membank compact` over many partitions said nothing until the end."""
    from memory.ops.compaction import CompactNow, compact_now

    bank = make_bank(ctx, max_turns=4)
    for key in ("a", "b", "c"):
        write_turns(ctx, bank, key, 6)
    write_turns(ctx, bank, "small", 2)  # under the threshold: not visited
    seen: list[tuple[int, int]] = []

    done = compact_now(ctx, CompactNow(bank.name), lambda step, total: seen.append((step, total)))
    results = done.partitions

    assert sorted(r.key for r in results) == ["a", "b", "c"]
    assert seen == [(1, 3), (1, 3), (1, 3)]
