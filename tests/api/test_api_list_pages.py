"""Cursor pages of bank lists and of a user's memories (issue 21): walking `next_cursor`
shows every item once, oldest first, also while items are made or deleted between pages;
offsets still work; a bad cursor is a 400; MCP pages alike."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from api_support import Api, client

from memory import banks
from memory.accounts import create_key
from memory.agents import longterm
from memory.api.mcp.bank_tools import list_memory_banks
from memory.api.mcp.inputs import ListBanks
from memory.api.mcp.memory_tools import UserMemories, list_user_memories
from memory.clock import FixedClock
from memory.models import BankCreate


def _walk(http: httpx.Client, path: str, limit: int, **params: Any) -> list[dict[str, Any]]:
    """Return every page of `path` by following next_cursor from the first page."""
    pages = []
    cursor = None
    while True:
        sent = {**params, "limit": limit, **({"cursor": cursor} if cursor else {})}
        answer = http.get(path, params=sent)
        assert answer.status_code == 200, answer.text
        pages.append(answer.json())
        cursor = pages[-1]["next_cursor"]
        if cursor is None:
            return pages


def test_bank_cursors_walk_every_bank_once_while_banks_change(api: Api, clock: FixedClock) -> None:
    ctx = api.ctx("acme")
    made = []
    for n in range(7):
        made.append(banks.create(ctx, BankCreate(name=f"b{n}", type="conversation")))
        clock.advance(timedelta(seconds=n % 2))  # ties in time: the name decides
    banks.create(api.ctx("beta"), BankCreate(name="theirs", type="conversation"))
    seen: list[str] = []
    with api.as_acme() as http:
        first = http.get("/memory_banks", params={"limit": 3}).json()
        seen += [b["id"] for b in first["data"]]
        late = banks.create(ctx, BankCreate(name="late", type="general"))
        banks.delete(ctx, made[1].id)  # already shown: the next page does not shift
        cursor = first["next_cursor"]
        while cursor is not None:
            answer = http.get("/memory_banks", params={"limit": 3, "cursor": cursor}).json()
            assert answer["next_offset"] is None  # a cursor walk is told only the next cursor
            seen += [b["id"] for b in answer["data"]]
            cursor = answer["next_cursor"]
        general = _walk(http, "/memory_banks", 1, type="general")
        by_offset = http.get("/memory_banks", params={"limit": 3, "offset": 3}).json()
        bad = http.get("/memory_banks", params={"cursor": "not-a-cursor"})
    assert first["total"] == 7 and first["next_offset"] == 3
    assert seen == [b.id for b in made] + [late.id]
    assert [b["id"] for page in general for b in page["data"]] == [late.id]
    assert [b["id"] for b in by_offset["data"]] == [made[n].id for n in (4, 5, 6)]
    assert bad.status_code == 400 and "cursor" in bad.json()["error"]["message"]


def test_a_key_limited_to_banks_pages_only_those(api: Api) -> None:
    ctx = api.ctx("acme")
    made = [banks.create(ctx, BankCreate(name=f"b{n}", type="conversation")) for n in range(5)]
    mine = [made[0].id, made[2].id, made[4].id]
    limited = create_key(api.base, "acme", scopes=["read"], banks=mine).key
    with client(api.url, limited) as http:
        pages = _walk(http, "/memory_banks", 2)
    assert [b["id"] for page in pages for b in page["data"]] == mine
    assert {page["total"] for page in pages} == {3} and len(pages) == 2


def test_memory_cursors_walk_a_users_memories_in_order(api: Api, clock: FixedClock) -> None:
    ctx = api.ctx("acme")
    for n in range(23):
        agent, scope = ("a1", "agent") if n % 3 == 0 else ("a2", "user")
        longterm.remember(ctx, user="u1", content=f"fact {n}", agent=agent, scope=scope)
        clock.advance(timedelta(seconds=n % 2))
    longterm.remember(ctx, user="u2", content="not u1's", agent="a1")
    longterm.remember(api.ctx("beta"), user="u1", content="another account's u1")
    path = "/users/u1/memories"
    with api.as_acme() as http:
        everything = _walk(http, path, 5)
        first = http.get(path, params={"limit": 4, "agent": "a2"}).json()
        longterm.remember(ctx, user="u1", content="said late", agent="a2")
        rest = _walk(http, path, 4, agent="a2", cursor=first["next_cursor"])
        by_offset = http.get(path, params={"limit": 5, "offset": 20}).json()
        nobody = http.get("/users/nobody/memories").json()
        bad = http.get(path, params={"cursor": "zz"})
    whole = [m.id for m in longterm.memories(ctx, user="u1")]
    seen = [m["id"] for page in everything for m in page["data"]]
    assert len(whole) == 24 and seen == whole[:23]
    assert [len(page["data"]) for page in everything] == [5, 5, 5, 5, 3]
    visible = [m.id for m in longterm.memories(ctx, user="u1", agent="a2")]
    walked = [m["id"] for m in first["data"]] + [m["id"] for p in rest for m in p["data"]]
    assert walked == visible and len(set(walked)) == len(walked) == 16  # 15 of a2 + the late one
    assert first["total"] == 15 and first["next_offset"] == 4
    assert [m["id"] for m in by_offset["data"]] == whole[20:24]
    assert nobody["data"] == [] and nobody["total"] == 0 and nobody["next_cursor"] is None
    assert bad.status_code == 400 and "cursor" in bad.json()["error"]["message"]


def test_mcp_lists_page_by_cursor_as_rest_does(api: Api) -> None:
    ctx = api.ctx("acme")
    made = [banks.create(ctx, BankCreate(name=f"b{n}", type="conversation")) for n in range(3)]
    for n in range(3):
        longterm.remember(ctx, user="u", content=f"fact {n}")
    first = list_memory_banks(ctx, ListBanks(limit=2, type="conversation"))
    second = list_memory_banks(
        ctx, ListBanks(limit=2, type="conversation", cursor=first.next_cursor)
    )
    assert [b.id for b in first.data + second.data] == [b.id for b in made]
    assert second.next_cursor is None
    page = list_user_memories(ctx, UserMemories(user="u", limit=2))
    after = list_user_memories(ctx, UserMemories(user="u", limit=2, cursor=page.next_cursor))
    shown = [m.content for m in page.data + after.data]
    assert shown == ["fact 0", "fact 1", "fact 2"] and after.next_cursor is None


def test_another_accounts_cursor_shows_only_your_own_items(api: Api) -> None:
    """A cursor holds a position, not a grant: beta paging with acme's cursors sees beta's."""
    ctx = api.ctx("acme")
    for n in range(3):
        banks.create(ctx, BankCreate(name=f"a{n}", type="conversation"))
        longterm.remember(ctx, user="u", content=f"acme fact {n}")
    theirs = banks.create(api.ctx("beta"), BankCreate(name="z", type="conversation"))
    longterm.remember(api.ctx("beta"), user="u", content="beta fact")
    with api.as_acme() as http:
        bank_cursor = http.get("/memory_banks", params={"limit": 1}).json()["next_cursor"]
        memory_cursor = http.get("/users/u/memories", params={"limit": 1}).json()["next_cursor"]
    with api.as_beta() as http:
        listed = http.get("/memory_banks", params={"cursor": bank_cursor}).json()
        memories = http.get("/users/u/memories", params={"cursor": memory_cursor}).json()
    beta_banks = [b.id for b in banks.list_banks(api.ctx("beta"))]
    assert theirs.id in beta_banks and listed["total"] == len(beta_banks) == 2
    assert {b["id"] for b in listed["data"]} <= set(beta_banks) and listed["data"]
    assert memories["total"] == 1
    assert all(m["content"] == "beta fact" for m in memories["data"])
