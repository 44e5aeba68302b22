"""How `MembankStore` maps LangGraph's items onto membank: banks, keys, user tags, the
indexed fields, TTL as retention, final deletion, and what it refuses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memory.agents import longterm
from memory.context import Context
from memory.errors import InvalidInput
from memory.integrations.langgraph import MembankStore
from memory.models import BankCreate, SearchQuery
from memory.ops import banks as bank_ops
from memory.ops import entries as entry_ops
from memory.wiring import open_context


@pytest.fixture
def ctx(tmp_path: Path) -> Context:
    """The default context on a fresh folder (the shipped offline embedder)."""
    return open_context(str(tmp_path / "db"))


def test_an_item_is_an_entry_of_the_namespace_bank(ctx: Context) -> None:
    store = MembankStore(context=ctx)
    store.put(("memories", "u1"), "k1", {"content": "likes green tea"})
    bank = bank_ops.get(ctx, "memories")
    assert bank.type == "general"
    [entry] = entry_ops.load(ctx, entry_ops.LoadRequest(bank="memories", key="u1.k1")).entries
    assert entry.content == "likes green tea"
    hits = entry_ops.search(
        ctx, entry_ops.SearchRequest(bank="memories", query=SearchQuery(text="tea"))
    ).hits
    assert [hit.entry.id for hit in hits] == [entry.id]


def test_update_and_delete_leave_no_old_entry(ctx: Context) -> None:
    store = MembankStore(context=ctx)
    store.put(("notes",), "n", {"text": "first draft"})
    store.put(("notes",), "n", {"text": "second draft"})
    loaded = entry_ops.load(ctx, entry_ops.LoadRequest(bank="notes", key="n")).entries
    assert [entry.content for entry in loaded] == ["second draft"]
    store.delete(("notes",), "n")
    assert entry_ops.load(ctx, entry_ops.LoadRequest(bank="notes", key="n")).entries == []


def test_a_users_item_is_a_long_term_memory_of_the_user(ctx: Context) -> None:
    store = MembankStore(context=ctx, user_at=1)
    store.put(("memories", "alice"), "a", {"content": "alice likes green tea"})
    store.put(("notes", "alice"), "a", {"content": "alice parks on level three"})
    store.put(("memories", "bob"), "b", {"content": "bob likes coffee"})
    store.put(("memories",), "shared", {"content": "the office opens at nine"})

    mine = longterm.memories(ctx, user="alice")
    assert [m.content for m in mine] == ["alice likes green tea", "alice parks on level three"]
    assert all(m.tags == [] and m.scope == "user" for m in mine)  # no namespace tag shown
    [best, *_] = longterm.recall(ctx, user="alice", query="green tea")
    assert best.memory.content == "alice likes green tea"
    assert [m.content for m in longterm.memories(ctx, user="bob")] == ["bob likes coffee"]
    # a namespace too short to name a user keeps its own bank, as without user_at
    [shared] = entry_ops.load(ctx, entry_ops.LoadRequest(bank="memories", key="shared")).entries
    assert shared.content == "the office opens at nine"

    # namespaces stay apart: the same key in two namespaces of one user is two items
    got = store.get(("memories", "alice"), "a")
    assert got is not None and got.value == {"content": "alice likes green tea"}
    assert [r.value["content"] for r in store.search(("notes", "alice"), query="tea")] == [
        "alice parks on level three"
    ]
    assert [r.key for r in store.search(("memories",))] == ["shared", "b", "a"]
    assert store.list_namespaces() == [
        ("memories",),
        ("memories", "alice"),
        ("memories", "bob"),
        ("notes", "alice"),
    ]


def test_update_delete_and_forget_meet_in_the_long_term_layer(ctx: Context) -> None:
    store = MembankStore(context=ctx, user_at=1)
    store.put(("memories", "alice"), "a", {"content": "alice likes green tea"})
    store.put(("memories", "alice"), "a", {"content": "alice likes oolong tea"})
    [memory] = longterm.memories(ctx, user="alice")
    assert memory.content == "alice likes oolong tea"
    store.put(("memories", "alice"), "b", {"content": "alice walks to work"})
    store.delete(("memories", "alice"), "b")
    assert [m.id for m in longterm.memories(ctx, user="alice")] == [memory.id]
    longterm.forget(ctx, user="alice", memory_id=memory.id)  # `membank memory forget`
    assert store.get(("memories", "alice"), "a") is None
    assert store.search(("memories", "alice"), query="tea") == []


def test_user_wipe_deletes_the_users_items_once(ctx: Context) -> None:
    from memory.ops import agents

    store = MembankStore(context=ctx, user_at=1)
    store.put(("memories", "alice"), "a", {"content": "alice likes green tea"})
    store.put(("notes", "alice"), "n", {"content": "alice parks on level three"})
    store.put(("memories", "bob"), "b", {"content": "bob likes coffee"})
    longterm.remember(ctx, user="alice", content="alice speaks Dutch")
    receipt = agents.wipe_user(ctx, agents.WipeRequest(user="alice"))
    assert receipt.counts.get("long_term") == 3
    assert receipt.counts.get("langgraph", 0) == 0
    assert receipt.rows_removed == 3
    assert store.get(("memories", "alice"), "a") is None
    assert [item.key for item in store.search(("memories",))] == ["b"]
    assert agents.wipe_user(ctx, agents.WipeRequest(user="alice")).rows_removed == 0


def test_a_users_item_must_be_a_valid_memory(ctx: Context) -> None:
    store = MembankStore(context=ctx, user_at=1)
    long_text = " ".join(f"word{i}" for i in range(400))
    with pytest.raises(InvalidInput, match=r"long-term memory of user 'alice'.*256-token"):
        store.put(("memories", "alice"), "a", {"content": long_text})
    assert longterm.memory_bank(ctx) is None  # nothing was made
    with pytest.raises(InvalidInput, match="user_at and ttl"):
        MembankStore(context=ctx, user_at=1, ttl={"default_ttl": 1440})


def test_index_fields_choose_the_searched_text(ctx: Context) -> None:
    store = MembankStore(context=ctx, index_fields=["title"])
    store.put(("docs",), "d1", {"title": "volcano eruptions", "body": "ignored words"})
    [entry] = entry_ops.load(ctx, entry_ops.LoadRequest(bank="docs", key="d1")).entries
    assert entry.content == "volcano eruptions"
    store.put(("docs",), "d2", {"title": "t", "body": "harbour cranes"}, index=["body"])
    assert store.search(("docs",), query="harbour cranes")[0].key == "d2"
    store.put(("docs",), "d3", {"title": "volcano"}, index=False)
    found = store.search(("docs",), query="volcano")
    assert [r.key for r in found][-1] == "d3" and found[-1].score is None


def test_ttl_in_whole_days_is_the_bank_retention(ctx: Context) -> None:
    store = MembankStore(context=ctx, ttl={"default_ttl": 7 * 1440})
    store.put(("short",), "k", {"text": "kept a week"})
    assert bank_ops.get(ctx, "short").retention_days == 7
    with pytest.raises(NotImplementedError, match="per-item TTL"):
        store.put(("short",), "k", {"text": "x"}, ttl=60)


def test_ttl_that_cannot_map_is_refused(ctx: Context) -> None:
    with pytest.raises(InvalidInput, match="whole number of days"):
        MembankStore(context=ctx, ttl={"default_ttl": 90})
    store = MembankStore(context=ctx)
    with pytest.raises(NotImplementedError):
        store.put(("a",), "k", {"text": "x"}, ttl=60)
    assert store.list_namespaces() == []


def test_a_bank_the_store_did_not_make_is_refused(ctx: Context) -> None:
    bank_ops.create(ctx, bank_ops.CreateBank(spec=BankCreate(name="support", type="general")))
    store = MembankStore(context=ctx)
    with pytest.raises(InvalidInput, match="did not make"):
        store.put(("support",), "k", {"text": "x"})


def test_unknown_filter_operator_is_refused(ctx: Context) -> None:
    store = MembankStore(context=ctx)
    store.put(("a",), "k", {"n": 1})
    with pytest.raises(InvalidInput, match=r"\$in"):
        store.search(("a",), filter={"n": {"$in": [1]}})


@pytest.mark.process
def test_memory_and_the_cli_do_not_import_langgraph() -> None:
    code = (
        "import sys, memory, memory.cli, memory.ops.agents; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langmem')]; "
        "sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_delete_is_final_in_membank_verify(ctx: Context) -> None:
    from memory.ops.maintenance import MaintenanceRequest, verify

    store = MembankStore(context=ctx)
    store.put(("vault",), "secret", {"text": "the door code is 4471"})
    store.put(("vault",), "secret", {"text": "the door code is 9902"})  # update: old forgotten
    store.delete(("vault",), "secret")
    [health] = verify(ctx, MaintenanceRequest(bank="vault"))
    assert health.clean, health
    assert store.search(("vault",), query="door code") == []
