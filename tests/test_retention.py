"""Retention deletes entries older than the bank's retention for good; never summarises."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from compaction_support import ExtractiveCompleter, make_bank

from memory import banks, entries, purge, retention, search
from memory.clock import FixedClock
from memory.compaction.bank import compact_bank
from memory.context import Context
from memory.errors import StorageError
from memory.models import SUMMARY_TAG, Bank, EntryIn, SearchQuery
from memory.types.entry_filter import EntryFilter

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _bank(**fields: object) -> Bank:
    values: dict[str, object] = {
        "id": "b",
        "account": "a",
        "name": "b",
        "type": "general",
        "mode": "fast",
        "created_at": T0,
        "updated_at": T0,
    }
    values.update(fields)
    return Bank.model_validate(values)


def test_plan_cutoff_and_indefinite() -> None:
    now = datetime(2026, 3, 31, 12, tzinfo=UTC)
    plan = retention.plan_retention(_bank(retention_days=30), now)
    assert plan.cutoff == datetime(2026, 3, 1, 12, tzinfo=UTC)
    assert plan.entry_filter() == EntryFilter(until=datetime(2026, 3, 1, 12, tzinfo=UTC))
    indefinite = retention.plan_retention(_bank(retention_days=None), now)
    assert indefinite.cutoff is None and indefinite.entry_filter() is None


def _write_at(ctx: Context, bank: Bank, when: datetime, text: str, **extra: object) -> str:
    item = EntryIn.model_validate(
        {"key": "k", "speaker": "s", "content": text, "created_at": when, **extra}
    )
    (entry,) = entries.write(ctx, bank, [item])
    return entry.id


def test_deletes_only_expired_entries_with_every_chunk(ctx: Context, clock: FixedClock) -> None:
    bank = make_bank(ctx, retention_days=30, mode="accurate")
    now = clock.now()
    long_text = " ".join(f"word{i}" for i in range(400))  # several chunks
    old = _write_at(ctx, bank, now - timedelta(days=31), long_text)
    edge = _write_at(ctx, bank, now - timedelta(days=30), "exactly at the cutoff stays")
    new = _write_at(ctx, bank, now - timedelta(days=1), "recent")
    assert ctx.store.count(bank.id) > 3

    result = retention.apply_retention(ctx, bank)

    assert (result.status, result.deleted) == ("deleted", 1)
    assert [e.id for e in entries.read(ctx, bank)] == [edge, new]
    assert ctx.store.count(bank.id) == 2  # no chunk of the old entry is left
    assert ctx.store.version_count(bank.id) == 1  # old versions pruned
    hits = search.search(ctx, bank, SearchQuery(text="word7 word8 word9", k=5))
    assert old not in {h.entry.id for h in hits}
    again = retention.apply_retention(ctx, bank)
    assert (again.status, again.deleted) == ("nothing_expired", 0)


def test_expired_summaries_go_too_and_stats_follow(ctx: Context, clock: FixedClock) -> None:
    bank = make_bank(ctx, retention_days=7)
    old = clock.now() - timedelta(days=8)
    item = EntryIn(key="k", speaker="compaction-summary", content="old summary", created_at=old)
    item.tags.append(SUMMARY_TAG)
    entries.write(ctx, bank, [item], kind="summary", summary_of=[["gone"]])
    banks.save(ctx, banks.get(ctx, bank.id).model_copy(update={"summary_count": 1}))
    result = retention.apply_retention(ctx, bank)
    assert (result.deleted, result.summaries_deleted) == (1, 1)
    assert banks.get(ctx, bank.id).summary_count == 0


def test_no_expired_information_survives_in_a_summary(ctx: Context, clock: FixedClock) -> None:
    bank = make_bank(ctx, retention_days=30, max_turns=3, compaction_prompt="Keep facts.")
    completer = ExtractiveCompleter()
    ctx.completer = lambda: completer
    _write_at(ctx, bank, clock.now() - timedelta(days=59), "My passport number is X1234567.")
    for days in (5, 4, 3):
        item = EntryIn(key="k", speaker="s", content=f"Note {days} days ago.")
        item.created_at = clock.now() - timedelta(days=days)
        entries.write(ctx, bank, [item])
    (compacted,) = compact_bank(ctx, bank)
    assert compacted.status == "compacted"  # the old entry is folded into a summary
    result = retention.apply_retention(ctx, bank)
    assert result.summaries_deleted == 1
    assert "X1234567" not in "".join(e.content for e in entries.read(ctx, bank))


def test_indefinite_bank_is_never_touched(ctx: Context, clock: FixedClock) -> None:
    bank = make_bank(ctx, type="general", retention_days=None)
    _write_at(ctx, bank, clock.now() - timedelta(days=5000), "ancient", speaker=None)
    result = retention.apply_retention(ctx, bank)
    assert result.status == "indefinite"
    assert len(entries.read(ctx, bank)) == 1


def test_apply_all_reports_each_bank(ctx: Context, clock: FixedClock) -> None:
    short = make_bank(ctx, "short", retention_days=1)
    make_bank(ctx, "forever", type="general", retention_days=None)
    _write_at(ctx, short, clock.now() - timedelta(days=2), "old")
    seen: list[tuple[int, int]] = []  # issue 25: `retention --all` was silent to the end
    results = retention.apply_all(ctx, banks.list_banks(ctx), lambda *step: seen.append(step))
    assert {(r.bank_name, r.status, r.deleted) for r in results} == {
        ("short", "deleted", 1),
        ("forever", "indefinite", 0),
    }
    assert seen == [(1, 2), (1, 2)]  # one step per bank, out of two


def test_apply_all_goes_past_a_bank_that_fails(
    ctx: Context, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = make_bank(ctx, "broken", retention_days=1)
    short = make_bank(ctx, "short", retention_days=1)
    for bank in (broken, short):
        _write_at(ctx, bank, clock.now() - timedelta(days=2), "old")
    delete = purge.delete_final

    def failing(ctx: Context, bank: Bank, *args: object, **kwargs: object) -> int:
        if bank.name == "broken":
            raise StorageError("disk gone")
        return delete(ctx, bank, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(purge, "delete_final", failing)

    results = retention.apply_all(ctx, [broken, short])

    assert [(r.bank_name, r.status, r.deleted, r.error) for r in results] == [
        ("broken", "failed", 0, "disk gone"),
        ("short", "deleted", 1, None),
    ]
    assert len(entries.read(ctx, broken)) == 1


def test_retention_of_a_bank_whose_mode_is_gone_still_deletes(
    ctx: Context, clock: FixedClock
) -> None:
    gone = make_bank(ctx, "gone", retention_days=1)
    _write_at(ctx, gone, clock.now() - timedelta(days=2), "old")
    _write_at(ctx, gone, clock.now(), "new")
    gone = gone.model_copy(update={"mode": "removed-user-mode"})  # its modes.yaml is gone
    result = retention.apply_retention(ctx, gone)
    assert (result.status, result.deleted) == ("deleted", 1)
    assert [e.content for e in entries.read(ctx, gone)] == ["new"]


def test_retention_longer_than_the_calendar_expires_nothing(
    ctx: Context, clock: FixedClock
) -> None:
    huge = make_bank(ctx, "huge", retention_days=1_000_000)
    short = make_bank(ctx, "short", retention_days=1)
    _write_at(ctx, huge, datetime(1, 1, 2, tzinfo=UTC), "year one")
    _write_at(ctx, short, clock.now() - timedelta(days=2), "old")
    results = retention.apply_all(ctx, [huge, short])
    assert [(r.bank_name, r.status, r.deleted) for r in results] == [
        ("huge", "nothing_expired", 0),
        ("short", "deleted", 1),
    ]
    assert len(entries.read(ctx, huge)) == 1


def test_cutoffs_before_the_year_1000_are_valid_filters(ctx: Context) -> None:
    bank = make_bank(ctx, "early", retention_days=None)
    _write_at(ctx, bank, datetime(500, 1, 1, tzinfo=UTC), "ancient")
    _write_at(ctx, bank, datetime(2020, 1, 1, tzinfo=UTC), "recent")
    before = EntryFilter(until=datetime(999, 12, 31, tzinfo=UTC))
    assert [e.content for e in entries.read(ctx, bank, before)] == ["ancient"]


def test_a_rerun_finishes_a_retention_whose_prune_did_not_run(
    ctx: Context, clock: FixedClock
) -> None:
    bank = make_bank(ctx, retention_days=30)
    _write_at(ctx, bank, clock.now() - timedelta(days=31), "expired qxretainneedle")
    _write_at(ctx, bank, clock.now(), "recent")
    plan = retention.plan_retention(bank, clock.now())
    expired = plan.entry_filter()
    assert expired is not None
    purge.delete_final(ctx, bank, expired, prune_now=False)  # as a crash
    assert purge.pending_deletions(ctx, bank)

    again = retention.apply_retention(ctx, bank)

    assert (again.status, again.deleted, again.finished_pending) == ("nothing_expired", 0, True)
    assert not purge.pending_deletions(ctx, bank)
    assert ctx.store.version_count(bank.id) == 1
    assert retention.apply_retention(ctx, bank).finished_pending is False  # nothing left to do


def test_an_indefinite_bank_still_gets_a_pending_deletion_finished(ctx: Context) -> None:
    bank = make_bank(ctx, type="general", retention_days=None)
    item = EntryIn(key="k", content="forget me")
    (entry,) = entries.write(ctx, bank, [item])
    entries.write(ctx, bank, [EntryIn(key="k", content="keep me")])
    purge.delete_final(ctx, bank, EntryFilter.entry(entry.id), prune_now=False)

    result = retention.apply_retention(ctx, bank)

    assert (result.status, result.finished_pending) == ("indefinite", True)
    assert not purge.pending_deletions(ctx, bank)
    assert [e.content for e in entries.read(ctx, bank)] == ["keep me"]
