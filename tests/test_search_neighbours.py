"""A conversation turn is found by the words of the turn before it, and deleting that turn
(forget, retention, compaction) takes its words out of the neighbour's index for good."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from compaction_support import ExtractiveCompleter, make_bank

from memory import banks, entries, retention, search
from memory.clock import FixedClock
from memory.compaction.bank import compact_bank
from memory.context import Context
from memory.entries.delete import forget
from memory.models import Bank, BankCreate, EntryIn, SearchQuery
from memory.store import filters
from memory.store.lance import LanceStore
from memory.store.locks import bank_lock
from memory.store.schema import CONTEXT_SEPARATOR

ASK = "Any dinner tips for Bilbao, quokka lover here?"
ANSWER = "Try the Basque place near the river."


def _said(speaker: str, text: str, key: str = "k") -> EntryIn:
    return EntryIn(key=key, speaker=speaker, content=text)


def _fts(ctx: Context, bank: Bank, text: str) -> list[str]:
    hits = search.search(ctx, bank, SearchQuery(text=text, method="fts", min_score=0.0))
    return [h.entry.content for h in hits]


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _index_rows(ctx: Context, bank: Bank) -> dict[str, tuple[str, str | None]]:
    table = ctx.store.index_documents(bank.id)  # type: ignore[attr-defined]
    return {row["text"]: (row["search_text"], row["context_id"]) for row in table.to_pylist()}


@pytest.fixture
def conv(ctx: Context) -> Bank:
    return banks.create(ctx, BankCreate(name="conv", type="conversation"))


@pytest.mark.parametrize("writes", [1, 2], ids=["one write", "two writes"])
def test_a_turn_is_found_by_the_words_of_the_turn_before_it(
    ctx: Context, conv: Bank, writes: int
) -> None:
    turns = [_said("Ann", ASK), _said("Bob", ANSWER), _said("Cy", "Other topic.", key="k2")]
    if writes == 1:
        asked, _, _ = entries.write(ctx, conv, turns)
    else:  # the turn before is read back from the table
        asked, _ = entries.write(ctx, conv, [turns[0], turns[2]])
        entries.write(ctx, conv, [turns[1]])
    assert _fts(ctx, conv, "dinner tips Bilbao") == [ASK, ANSWER]  # its own words rank first
    rows = _index_rows(ctx, conv)
    assert rows[ANSWER] == (
        f"1 November 2026\nBob: {ANSWER}{CONTEXT_SEPARATOR}{ASK}",
        asked.id,
    )
    assert rows[ASK][1] is None and rows["Other topic."][1] is None  # another key is no context
    assert "quokka" not in _fts(ctx, conv, "Bob")  # the neighbour's speaker is not carried


def test_the_turn_before_is_the_previous_one_in_time_not_in_write_order(
    ctx: Context, conv: Bank, clock: FixedClock
) -> None:
    late = _said("Ann", "Later words.")
    entries.write(ctx, conv, [late])
    early = _said("Ann", "Earlier words.")
    early.created_at = clock.now() - timedelta(hours=2)
    entries.write(ctx, conv, [early])
    middle = _said("Bob", "Middle words.")
    middle.created_at = clock.now() - timedelta(hours=1)
    entries.write(ctx, conv, [middle])
    rows = _index_rows(ctx, conv)
    assert rows["Earlier words."][1] is None  # nothing stored was older
    assert rows["Middle words."][0].endswith(f"{CONTEXT_SEPARATOR}Earlier words.")


def _said_at(speaker: str, text: str, at: datetime, key: str = "k") -> EntryIn:
    item = _said(speaker, text, key)
    item.created_at = at
    return item


@pytest.mark.parametrize("writes", [1, 2], ids=["one write", "two writes"])
def test_a_turn_carries_the_turn_before_only_from_the_same_exchange(
    ctx: Context, conv: Bank, clock: FixedClock, writes: int
) -> None:
    """The turn before is carried when it is at most `neighbour_within_hours` (6) earlier;
    a key resuming later starts afresh: its first turn is found by its own words only."""
    start = clock.now() - timedelta(days=2)
    turns = [
        _said_at("Ann", ASK, start),
        _said_at("Bob", ANSWER, start + timedelta(hours=6)),  # at the bound: carried
        _said_at("Ann", "Back again, wombat news.", start + timedelta(hours=12, seconds=1)),
        _said_at("Bob", "Glad to hear.", start + timedelta(hours=12, minutes=5)),
    ]
    if writes == 1:
        asked, _, back, _ = entries.write(ctx, conv, turns)
    else:  # the turn before is read back from the table
        asked, _, back, _ = [entries.write(ctx, conv, [t])[0] for t in turns]
    rows = _index_rows(ctx, conv)
    assert rows[ANSWER][1] == asked.id
    assert rows["Back again, wombat news."] == (
        "31 October 2026\nAnn: Back again, wombat news.",
        None,
    )
    assert rows["Glad to hear."][1] == back.id
    assert _fts(ctx, conv, "Basque river") == [ANSWER]  # not the turn resuming after it
    assert _fts(ctx, conv, "wombat") == ["Back again, wombat news.", "Glad to hear."]


def test_the_bound_is_a_setting(
    ctx: Context, conv: Bank, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory.settings import Settings

    assert Settings().neighbour_within_hours == 6
    monkeypatch.setenv("MEMBANK_NEIGHBOUR_WITHIN_HOURS", "0.5")
    hours = Settings().neighbour_within_hours
    ctx.settings = ctx.settings.model_copy(update={"neighbour_within_hours": hours})
    start = clock.now() - timedelta(hours=2)
    entries.write(ctx, conv, [_said_at("Ann", ASK, start)])
    entries.write(ctx, conv, [_said_at("Bob", ANSWER, start + timedelta(minutes=31))])
    assert _index_rows(ctx, conv)[ANSWER][1] is None
    assert _fts(ctx, conv, "quokka") == [ASK]
    ctx.settings = ctx.settings.model_copy(update={"neighbour_within_hours": 48.0})
    entries.write(ctx, conv, [_said_at("Cy", "Third words.", clock.now())])
    assert _index_rows(ctx, conv)["Third words."][1] is not None  # 89 minutes: within 48 h


def test_a_general_bank_carries_no_neighbour(ctx: Context) -> None:
    general = banks.create(ctx, BankCreate(name="g", type="general"))
    entries.write(ctx, general, [EntryIn(key="k", content=ASK), EntryIn(key="k", content=ANSWER)])
    assert {v[1] for v in _index_rows(ctx, general).values()} == {None}
    assert _fts(ctx, general, "Bilbao") == [ASK]


def test_a_separator_in_a_text_cannot_split_the_index_text(ctx: Context, conv: Bank) -> None:
    odd = f"left{CONTEXT_SEPARATOR}right"
    entries.write(ctx, conv, [_said("Ann", ASK), _said("Bob", odd)])
    third = entries.write(ctx, conv, [_said("Cy", "third")])
    search_text, _ = _index_rows(ctx, conv)[odd]
    assert search_text.count(CONTEXT_SEPARATOR) == 1  # only the one before the carried turn
    forget(ctx, conv, entries.read(ctx, conv)[0].id)  # the ask: the odd turn drops it
    assert _index_rows(ctx, conv)[odd][0] == "1 November 2026\nBob: left right"
    assert third[0].content in _fts(ctx, conv, "right")  # the third turn carries the odd one


def test_forgetting_a_turn_takes_its_words_out_of_the_next_turns_index(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    asked, _ = entries.write(ctx, conv, [_said("Ann", ASK), _said("Bob", ANSWER)])
    root = tmp_path / "db"
    assert _files_containing(root, b"quokka")  # positive control: the files hold the words
    forget(ctx, conv, asked.id)
    assert _fts(ctx, conv, "quokka dinner tips Bilbao") == []
    assert _index_rows(ctx, conv)[ANSWER] == (f"1 November 2026\nBob: {ANSWER}", None)
    assert _fts(ctx, conv, "Basque river") == [ANSWER]  # its own words still find it
    assert _files_containing(root, b"quokka") == []
    assert ctx.store.old_version_count(conv.id) == 0
    reopened = Context(store=LanceStore(str(root)), account=ctx.account, embedder=ctx.embedder)
    assert _fts(reopened, conv, "quokka") == []


def test_retention_and_compaction_leave_no_copy_in_a_kept_turn(
    ctx: Context, clock: FixedClock, tmp_path: Path
) -> None:
    bank = make_bank(ctx, retention_days=30)
    old = _said("Ann", ASK)
    old.created_at = clock.now() - timedelta(days=30, hours=1)  # expired ...
    kept = _said("Bob", ANSWER)
    kept.created_at = clock.now() - timedelta(days=30, hours=-1)  # ... carried by a kept turn
    entries.write(ctx, bank, [old, kept, _said("Cy", "Much later.")])
    assert _index_rows(ctx, bank)[ANSWER][0].endswith(ASK)  # positive control
    assert retention.apply_retention(ctx, bank).deleted == 1
    assert _fts(ctx, bank, "quokka") == []
    assert _index_rows(ctx, bank)[ANSWER] == (f"2 October 2026\nBob: {ANSWER}", None)
    assert _files_containing(tmp_path / "db", b"quokka") == []

    chat = make_bank(ctx, "chat2", max_turns=4)
    ctx.completer = lambda: ExtractiveCompleter()
    turns = [_said("Ann", f"Turn {n} mentions wombat{n}.") for n in range(5)]
    entries.write(ctx, chat, turns)
    (done,) = compact_bank(ctx, chat)
    assert done.status == "compacted"
    kept = [e for e in entries.read(ctx, chat) if e.kind == "entry"]
    covered = [f"wombat{n}." for n in range(5) if all(f"wombat{n}." not in e.content for e in kept)]
    assert covered and len(kept) >= 1
    rows = _index_rows(ctx, chat)
    for entry in kept:  # the oldest kept turn carried a covered one: it no longer does
        search_text, context = rows[entry.content]
        assert context is None or context in {e.id for e in kept}
        assert not [word for word in covered if word in search_text]


def _waiting_on(lock_file: Path) -> bool:
    """Return True when some process or thread waits for an flock on `lock_file`."""
    inode = lock_file.stat().st_ino
    lines = Path("/proc/locks").read_text().splitlines()
    return any("->" in line and f":{inode} " in line for line in lines)


def test_a_write_reads_the_turn_before_only_after_a_running_deletion(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    """A deletion holds the bank's lock from its carrier scan to its prune; a conversation
    write waits for it, so it never carries a turn that the deletion is removing."""
    (asked,) = entries.write(ctx, conv, [_said("Ann", ASK)])
    lock_file = tmp_path / "db" / "_locks" / f"{conv.id}.bank.lock"
    done: list[Exception | None] = []

    def write() -> None:
        try:
            entries.write(ctx, conv, [_said("Bob", ANSWER)])
            done.append(None)
        except Exception as exc:  # handed to the test thread
            done.append(exc)

    with bank_lock(ctx.store.uri, conv.id, timeout=None):  # a deletion in progress ...
        writer = threading.Thread(target=write)
        writer.start()
        deadline = time.monotonic() + 60
        while not _waiting_on(lock_file) and not done and time.monotonic() < deadline:
            time.sleep(0.01)  # wait for a condition, not for time: the writer must block
        assert not done and _waiting_on(lock_file)
        ctx.store.drop_neighbours_of(conv.id, filters.equals("entry_id", asked.id))
        ctx.store.delete_where(conv.id, filters.equals("entry_id", asked.id))  # ... ends
    writer.join()
    assert done == [None]
    assert _index_rows(ctx, conv)[ANSWER] == (f"1 November 2026\nBob: {ANSWER}", None)
    assert _files_containing(tmp_path / "db", b"quokka") == []


def test_a_long_turn_before_is_carried_by_its_last_chunk(ctx: Context) -> None:
    bank = banks.create(ctx, BankCreate(name="acc", type="conversation", mode="accurate"))
    long = " ".join(f"word{n}" for n in range(300)) + " finale."
    (first,) = entries.write(ctx, bank, [_said("Ann", long)])
    entries.write(ctx, bank, [_said("Bob", "Short reply.")])
    chunks = ctx.store.scan(bank.id, columns=["entry_id", "chunk_index", "text"]).to_pylist()
    mine = sorted((r["chunk_index"], r["text"]) for r in chunks if r["entry_id"] == first.id)
    assert len(mine) > 1
    search_text, context = _index_rows(ctx, bank)["Short reply."]
    assert context == first.id
    assert search_text.endswith(f"{CONTEXT_SEPARATOR}{mine[-1][1]}")


def test_the_neighbour_index_can_be_turned_off_for_new_turns(ctx: Context, conv: Bank) -> None:
    ctx.settings = ctx.settings.model_copy(update={"neighbour_index": False})
    entries.write(ctx, conv, [_said("Ann", ASK)])
    entries.write(ctx, conv, [_said("Bob", ANSWER)])
    assert _index_rows(ctx, conv)[ANSWER] == (f"1 November 2026\nBob: {ANSWER}", None)
    assert _fts(ctx, conv, "quokka") == [ASK]


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from memory.settings import Settings

    assert Settings().neighbour_index is True
    monkeypatch.setenv("MEMBANK_NEIGHBOUR_INDEX", "0")
    assert Settings().neighbour_index is False


def test_a_table_carrying_text_in_its_rows_keeps_its_layout_and_deletes_for_good(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    """A bank made before issue 24 carries the turn before in its entries table's rows: it
    keeps doing so (no carried table), its turns are found by their neighbour's words, and
    forgetting the carried turn still takes its words out of the carrier's row."""
    entries.write(ctx, conv, [_said("Ann", "First words.")])  # the table and its indices
    table = ctx.store.entries_table(conv.id)
    assert table is not None
    old = table.to_lance().to_table().to_pylist()[0]  # a row the old writer made
    asked_id = "a" * 32
    table.add(
        [
            {**old, "entry_id": asked_id, "text": ASK, "content": ASK, "seq": old["seq"] + 1},
            {
                **old,
                "entry_id": "b" * 32,
                "text": ANSWER,
                "content": ANSWER,
                "seq": old["seq"] + 2,
                "search_text": f"1 November 2026\nBob: {ANSWER}{CONTEXT_SEPARATOR}{ASK}",
                "context_id": asked_id,
            },
        ]
    )
    entries.write(ctx, conv, [_said("Cy", "Later words.")])
    assert ctx.store.carried_table(conv.id) is None  # type: ignore[attr-defined]
    assert _fts(ctx, conv, "quokka")[-1] == ANSWER  # found by the words it carries
    assert _files_containing(tmp_path / "db", b"quokka")  # positive control
    forget(ctx, conv, asked_id)
    assert _fts(ctx, conv, "quokka") == []
    assert _files_containing(tmp_path / "db", b"quokka") == []
