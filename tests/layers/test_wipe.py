"""The per-user wipe: the receipt, and no trace of the user in any read path or table file."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from lance_files import btree_keys, data_values

from memory import entries, export, search, stats
from memory.context import Context
from memory.errors import InvalidInput
from memory.layers import longterm, wipe
from memory.models import SearchQuery
from memory.purge import PrunePending
from memory.store.lance import entries_table_name
from memory.testing import failing_after

GONE, KEPT = "zzwipeduser", "zzkeptuser"
GONE_TEXT, KEPT_TEXT = "zzwipedneedle", "zzkeptneedle"


def _fill(ctx: Context) -> None:
    for user, text in ((GONE, GONE_TEXT), (KEPT, KEPT_TEXT)):
        longterm.remember(ctx, user=user, content=f"{text} likes green tea", tags=["tea"])
        longterm.remember(
            ctx, user=user, agent="chef", content=f"{text} cooks pasta", scope="agent"
        )
        longterm.remember(ctx, user=user, agent="coach", content=f"{text} runs", scope="agent")


def _traces(ctx: Context, tmp_path: Path, user: str, text: str) -> dict[str, bool]:
    """Where `user` or `text` can still be found: every read path and the table's files."""
    bank = longterm.memory_bank(ctx)
    assert bank is not None
    table_dir = tmp_path / "db" / f"{entries_table_name(bank.id)}.lance"
    json_out, parquet_out = tmp_path / f"{user}.json", tmp_path / f"{user}.parquet"
    export.export(ctx, bank, "json", json_out)
    export.export(ctx, bank, "parquet", parquet_out)
    figures = stats.compute(ctx, bank)
    hits = [
        hit.entry
        for method in ("hybrid", "vector", "fts")
        for hit in search.search(ctx, bank, SearchQuery(text=f"{text} tea", method=method, k=50))
    ]
    return {
        "recall": any(
            h.memory.user == user
            for agent in (None, "chef", "coach")
            for h in longterm.recall(ctx, user=user, agent=agent, query=f"{text} tea", k=50)
        ),
        "memories": bool(longterm.memories(ctx, user=user)),
        "search": any(e.key == user or text in e.content for e in hits),
        "load": bool(entries.load(ctx, bank, user)),
        "stats": any(c.name == user for c in figures.top_keys),
        "json export": text in json_out.read_text(encoding="utf-8"),
        "parquet export": text in str(pl.read_parquet(parquet_out).to_dicts()),
        "data files": any(
            text in str(value)
            for column in ("content", "text", "search_text")
            for value in data_values(table_dir, column)
        )
        or user in data_values(table_dir, "key"),
        "key index": user in btree_keys(table_dir),
        "bytes": any(
            text.encode() in p.read_bytes() for p in (tmp_path / "db").rglob("*") if p.is_file()
        ),
    }


def test_a_wipe_leaves_no_trace_of_the_user_and_keeps_everyone_else(
    ctx: Context, tmp_path: Path
) -> None:
    _fill(ctx)
    ctx.store.maintain(longterm.memory_bank(ctx).id)  # type: ignore[union-attr]
    everywhere = dict.fromkeys(_traces(ctx, tmp_path, GONE, GONE_TEXT), True)
    assert _traces(ctx, tmp_path, GONE, GONE_TEXT) == everywhere  # positive control

    receipt = wipe.wipe_user(ctx, GONE)

    bank = longterm.memory_bank(ctx)
    assert bank is not None
    assert receipt.user == GONE and receipt.finished_at == ctx.clock.now()
    assert [t.model_dump() for t in receipt.tables] == [
        {
            "layer": "long_term",
            "table": bank.id,
            "rows_removed": 3,
            "version_after": ctx.store.table_version(bank.id),
        }
    ]
    assert receipt.counts == {"long_term": 3} and receipt.rows_removed == 3
    assert ctx.store.version_count(bank.id) == 1  # no old version keeps the rows
    assert _traces(ctx, tmp_path, GONE, GONE_TEXT) == dict.fromkeys(everywhere, False)
    assert _traces(ctx, tmp_path, KEPT, KEPT_TEXT) == everywhere  # the other user is intact
    assert len(longterm.memories(ctx, user=KEPT)) == 3


def test_a_wipe_of_an_unknown_user_or_account_removes_nothing(ctx: Context) -> None:
    assert wipe.wipe_user(ctx, GONE).tables == []  # no long-term bank yet
    _fill(ctx)
    receipt = wipe.wipe_user(ctx, "nobody")
    assert receipt.counts == {"long_term": 0}
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
    with pytest.raises(PrunePending, match="prune is due"):
        wipe.wipe_user(ctx, GONE)
    assert longterm.memories(ctx, user=GONE) == []  # gone from every read already
    bank = longterm.memory_bank(ctx)
    assert bank is not None and ctx.store.version_count(bank.id) > 1
    monkeypatch.setattr(ctx.store, "prune", real)

    again = wipe.wipe_user(ctx, GONE)

    assert again.counts == {"long_term": 0}
    assert ctx.store.version_count(bank.id) == 1
    assert not any(
        GONE_TEXT.encode() in p.read_bytes() for p in (tmp_path / "db").rglob("*") if p.is_file()
    )


def test_the_receipt_is_plain_json(ctx: Context) -> None:
    _fill(ctx)
    data = json.loads(wipe.wipe_user(ctx, GONE).model_dump_json())
    assert set(data) == {"user", "tables", "counts", "finished_at"}
