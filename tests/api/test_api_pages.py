"""Threads paged in storage (issue 21): cursors walk a thread oldest first with no entry
twice or missed, also while entries are written; offsets still work; a bad cursor is 400."""

from __future__ import annotations

from datetime import timedelta

from api_support import Api

from memory import banks, entries
from memory.clock import FixedClock
from memory.context import Context
from memory.models import BankCreate, EntryIn
from memory.types.entry_filter import EntryFilter


def test_cursor_pages_walk_the_thread_in_order(api: Api) -> None:
    ctx = api.ctx("acme")
    bank = banks.create(ctx, BankCreate(name="c", type="conversation"))
    items = [EntryIn(key="k", speaker="S", content=f"turn {n}") for n in range(25)]
    entries.write(ctx, bank, items)
    entries.write(ctx, bank, [EntryIn(key="other", speaker="S", content="elsewhere")])
    whole = [e.id for e in entries.load(ctx, bank, "k")]
    seen: list[str] = []
    with api.as_acme() as http:
        cursor = None
        while True:
            params = {"key": "k", "limit": 10, **({"cursor": cursor} if cursor else {})}
            answer = http.get(f"/memory_banks/{bank.id}/entries", params=params).json()
            assert answer["total"] == (25 if len(seen) < 10 else 26)
            seen += [e["id"] for e in answer["data"]]
            if len(seen) == 10:  # a write between pages lands after the cursor, not in it
                entries.write(ctx, bank, [EntryIn(key="k", speaker="S", content="late")])
            cursor = answer["next_cursor"]
            if cursor is None:
                break
        by_offset = http.get(
            f"/memory_banks/{bank.id}/entries", params={"key": "k", "limit": 10, "offset": 20}
        ).json()
        bad = http.get(f"/memory_banks/{bank.id}/entries", params={"key": "k", "cursor": "zz"})
    late = entries.load(ctx, bank, "k")[-1].id
    assert seen == [*whole, late]
    assert [e["id"] for e in by_offset["data"]] == [*whole, late][20:26]
    assert bad.status_code == 400 and "cursor" in bad.json()["error"]["message"]


def test_a_store_page_is_a_slice_of_the_whole_thread(ctx: Context, clock: FixedClock) -> None:
    bank = banks.create(ctx, BankCreate(name="c", type="conversation"))
    for n in range(7):
        entries.write(ctx, bank, [EntryIn(key="k", speaker="S", content=f"t{n}")])
        clock.advance(timedelta(seconds=1 if n % 2 else 0))  # ties in time: write order decides
    whole = entries.load(ctx, bank, "k")
    page = ctx.store.entry_page(bank.id, EntryFilter.key("k"), limit=3, offset=2)
    assert [e.id for e in page.entries] == [e.id for e in whole[2:5]]
    assert page.total == 7 and page.next_after is not None
    rest = ctx.store.entry_page(bank.id, EntryFilter.key("k"), limit=10, after=page.next_after)
    assert [e.id for e in rest.entries] == [e.id for e in whole[5:]] and rest.next_after is None
