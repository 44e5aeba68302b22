"""The per-user wipe: the receipt, and no trace of the user in any read path or table file."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from lance_files import btree_keys, data_values

from memory import banks, entries, search, stats
from memory.agents import longterm, session, wipe, working
from memory.agents.turns import Turn
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import Bank, Entry, SearchQuery
from memory.purge import PrunePending
from memory.store.lance import entries_table_name
from memory.testing import failing_after
from memory.transfer import export

GONE, KEPT = "zzwipeduser", "zzkeptuser"
GONE_TEXT, KEPT_TEXT = "zzwipedneedle", "zzkeptneedle"


def _fill(ctx: Context) -> None:
    """Give both users memories in every layer: turns, a session summary, long-term ones."""
    for user, text in ((GONE, GONE_TEXT), (KEPT, KEPT_TEXT)):
        longterm.remember(ctx, user=user, content=f"{text} likes green tea", tags=["tea"])
        longterm.remember(
            ctx, user=user, agent="chef", content=f"{text} cooks pasta", scope="agent"
        )
        longterm.remember(ctx, user=user, agent="coach", content=f"{text} runs", scope="agent")
        conversation = f"conversation-of-{user}"
        said = [
            Turn(role="user", content=f"I am {text} and I like green tea"),
            Turn(role="assistant", content=f"Noted, {text}: green tea."),
        ]
        working.add_turns(ctx, conversation, said, user=user, agent="chef")
        session.merge_conversation(ctx, user=user, agent="chef", conversation=conversation)


def _traces(ctx: Context, tmp_path: Path, user: str, text: str) -> dict[str, bool]:
    """Where `user` or `text` can still be found: every read path and every table's files."""
    found = dict.fromkeys(READ_PATHS, False)
    found["recall"] = any(
        h.memory.user == user
        for agent in (None, "chef", "coach")
        for h in longterm.recall(ctx, user=user, agent=agent, query=f"{text} tea", k=50)
    )
    found["memories"] = bool(longterm.memories(ctx, user=user))
    found["turns"] = bool(working.turns(ctx, f"conversation-of-{user}"))
    summary = session.session_summary(ctx, user, "chef")
    found["session summary"] = summary is not None and text in summary.summary
    found["session start"] = any(
        text in t.content for t in session.start_conversation(ctx, user=user, agent="chef")
    )
    for bank in banks.list_banks(ctx):
        table_dir = tmp_path / "db" / f"{entries_table_name(bank.id)}.lance"
        json_out = tmp_path / f"{bank.name}-{user}.json"
        parquet_out = tmp_path / f"{bank.name}-{user}.parquet"
        export.export(ctx, bank, "json", json_out)
        export.export(ctx, bank, "parquet", parquet_out)
        hits = [
            hit.entry
            for method in ("hybrid", "vector", "fts")
            for hit in search.search(ctx, bank, SearchQuery(text=f"{text} tea", method=method))
        ]
        columns = ("key", "content", "text", "search_text", "metadata")
        found["search"] |= any(text in e.content or user in e.key for e in hits)
        found["load"] |= any(
            text in e.content for k in _keys(ctx, bank) for e in _load(ctx, bank, k)
        )
        found["stats"] |= any(user in c.name for c in stats.compute(ctx, bank).top_keys)
        found["json export"] |= text in json_out.read_text(encoding="utf-8")
        found["parquet export"] |= text in str(pl.read_parquet(parquet_out).to_dicts())
        found["data files"] |= any(
            text in str(value) for column in columns for value in data_values(table_dir, column)
        )
        found["key index"] |= any(user in key for key in btree_keys(table_dir))
    found["bytes"] = any(
        text.encode() in p.read_bytes() for p in (tmp_path / "db").rglob("*") if p.is_file()
    )
    return found


READ_PATHS = (
    "recall", "memories", "turns", "session summary", "session start", "search", "load",
    "stats", "json export", "parquet export", "data files", "key index", "bytes",
)  # fmt: skip


def _keys(ctx: Context, bank: Bank) -> set[str]:
    return set(ctx.store.scan(bank.id, columns=["key"]).column("key").to_pylist())


def _load(ctx: Context, bank: Bank, key: str) -> list[Entry]:
    return entries.load(ctx, bank, key)


def test_a_wipe_leaves_no_trace_of_the_user_in_any_layer_and_keeps_everyone_else(
    ctx: Context, tmp_path: Path
) -> None:
    _fill(ctx)
    for bank in banks.list_banks(ctx):
        ctx.store.maintain(bank.id)  # the rows folded into the indices too
    everywhere = dict.fromkeys(READ_PATHS, True)
    assert _traces(ctx, tmp_path, GONE, GONE_TEXT) == everywhere  # positive control

    receipt = wipe.wipe_user(ctx, GONE)

    assert receipt.user == GONE and receipt.finished_at == ctx.clock.now()
    by_layer = {t.layer: t for t in receipt.tables}
    assert set(by_layer) == {"working", "session", "long_term"}
    assert receipt.counts == {"working": 2, "session": 1, "long_term": 3}
    assert receipt.rows_removed == 6
    for line in receipt.tables:
        bank = banks.get(ctx, line.table)
        assert line.version_after == ctx.store.table_version(bank.id)
        assert ctx.store.version_count(bank.id) == 1  # no old version keeps the rows
    assert _traces(ctx, tmp_path, GONE, GONE_TEXT) == dict.fromkeys(READ_PATHS, False)
    assert _traces(ctx, tmp_path, KEPT, KEPT_TEXT) == everywhere  # the other user is intact
    assert len(longterm.memories(ctx, user=KEPT)) == 3


def test_a_wipe_of_an_unknown_user_or_account_removes_nothing(ctx: Context) -> None:
    empty = wipe.wipe_user(ctx, GONE)  # no layer has a bank yet: nothing removed
    assert "long_term" not in {t.layer for t in empty.tables}
    assert empty.rows_removed == 0
    _fill(ctx)
    receipt = wipe.wipe_user(ctx, "nobody")
    assert receipt.counts == {"working": 0, "session": 0, "long_term": 0}
    assert len(longterm.memories(ctx, user=GONE)) == 3


@pytest.mark.parametrize("user", ["", "  ", "a\nb", "x" * 201])
def test_a_wipe_refuses_a_bad_user_id(ctx: Context, user: str) -> None:
    with pytest.raises(InvalidInput, match="user id"):
        wipe.wipe_user(ctx, user)


def test_a_wipe_whose_prune_failed_is_finished_by_running_it_again(
    ctx: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(ctx)
    real = ctx.store.prune
    monkeypatch.setattr(ctx.store, "prune", failing_after(0, real, OSError("disk full")))
    with pytest.raises(PrunePending, match="did not finish in every layer"):
        wipe.wipe_user(ctx, GONE)
    assert longterm.memories(ctx, user=GONE) == []  # gone from every read already
    bank = longterm.memory_bank(ctx)
    assert bank is not None and ctx.store.version_count(bank.id) > 1
    monkeypatch.setattr(ctx.store, "prune", real)

    again = wipe.wipe_user(ctx, GONE)

    assert again.counts["long_term"] == 0
    assert ctx.store.version_count(bank.id) == 1
    assert not any(
        GONE_TEXT.encode() in p.read_bytes() for p in (tmp_path / "db").rglob("*") if p.is_file()
    )


def test_the_receipt_is_plain_json(ctx: Context) -> None:
    _fill(ctx)
    data = json.loads(wipe.wipe_user(ctx, GONE).model_dump_json())
    assert set(data) == {"user", "tables", "counts", "finished_at"}


def test_a_wipe_reports_progress_after_each_layer(ctx: Context) -> None:
    _fill(ctx)
    seen: list[tuple[int, int, int, bool]] = []  # step, total, long-term left, summary left

    def note(step: int, total: int) -> None:
        left = len(longterm.memories(ctx, user=GONE))
        summary = session.session_summary(ctx, GONE, "chef") is not None
        seen.append((step, total, left, summary))

    wipe.wipe_user(ctx, GONE, progress=note)
    # one call per layer as it finishes (working, session, long-term, LangGraph store items),
    # not all at the end
    assert seen == [(1, 4, 3, True), (1, 4, 3, False), (1, 4, 0, False), (1, 4, 0, False)]
