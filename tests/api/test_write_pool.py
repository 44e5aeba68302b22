"""The write pool (issue 21, noisy neighbour): an account's writes take turns, and one
account's running write does not hold up another account's."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar, cast

import pytest
from mcp_support import fails, ok

from memory.api.mcp.server import build_server
from memory.api.mcp.state import own_state
from memory.api.writes import WritePool
from memory.config import modes
from memory.context import Context
from memory.ports import Store
from memory.testing import hashing_embedder

T = TypeVar("T")


def _ctx(account: str) -> Context:
    # the pool never touches the store: the work it runs does
    return Context(store=cast(Store, object()), account=account, embedder=hashing_embedder)


def test_one_accounts_writes_take_turns_while_another_account_writes() -> None:
    pool = WritePool(workers=2, per_account=1, niceness=0)
    release = threading.Event()
    running = threading.Event()
    started: list[str] = []

    def blocked(name: str) -> Callable[[Context], str]:
        def work(ctx: Context) -> str:
            started.append(name)
            if name == "noisy-1":
                running.set()
                release.wait(timeout=30)
            return f"{ctx.account}:{name}"

        return work

    async def scenario() -> tuple[list[str], list[object]]:
        first = asyncio.ensure_future(pool.run(_ctx("noisy"), blocked("noisy-1")))
        second = asyncio.ensure_future(pool.run(_ctx("noisy"), blocked("noisy-2")))
        await asyncio.to_thread(running.wait, 30)  # noisy-1 holds the noisy account's turn
        quiet = await pool.run(_ctx("quiet"), blocked("quiet-1"))
        seen = list(started)  # the quiet write ran while noisy-1 still held its turn
        release.set()
        return seen, [quiet, await first, await second]

    try:
        seen, results = asyncio.run(scenario())
    finally:
        release.set()
        pool.close()
    assert seen == ["noisy-1", "quiet-1"]
    assert results == ["quiet:quiet-1", "noisy:noisy-1", "noisy:noisy-2"]


def test_a_failed_write_frees_its_turn_and_a_contexts_own_embedder_is_kept() -> None:
    pool = WritePool(workers=1, per_account=1, niceness=0)
    ctx = _ctx("acme")

    def fails(_: Context) -> None:
        raise ValueError("bad entry")

    async def scenario() -> object:
        with pytest.raises(ValueError, match="bad entry"):
            await pool.run(ctx, fails)
        return await pool.run(ctx, lambda local: local.embedder)

    try:
        factory = asyncio.run(scenario())
    finally:
        pool.close()
    mode = modes()["balanced"]
    assert callable(factory)
    assert type(factory(mode)) is type(hashing_embedder(mode))


class _Recording(WritePool):
    """A write pool that notes the thread each piece of work ran on."""

    def __init__(self) -> None:
        super().__init__(workers=1, per_account=1, niceness=0)
        self.threads: list[str] = []

    async def run(self, ctx: Context, work: Callable[[Context], T]) -> T:
        def noted(local: Context) -> T:
            self.threads.append(threading.current_thread().name)
            return work(local)

        return await super().run(ctx, noted)


def test_mcp_entry_writes_and_remembered_memories_run_in_the_write_pool(ctx: Context) -> None:
    pool = _Recording()
    try:
        with own_state(ctx) as state:
            server = build_server(state, writes=pool)
            bank = ok(server, "create_memory_bank", {"name": "notes", "type": "general"})
            ref = {"memory_bank_id": bank["id"]}
            ok(server, "write_memory_bank_entry", {**ref, "key": "k", "content": "the tank"})
            ok(server, "memory_remember", {"user": "u1", "content": "Prefers tea."})
            hits = ok(server, "search_memory_bank", {**ref, "text": "tank"})["data"]
            refused = fails(server, "write_memory_bank_entry", {**ref, "text": "no key"})
    finally:
        pool.close()
    assert [h["entry"]["content"] for h in hits] == ["the tank"]
    assert "invalid arguments" in refused  # refused before it waits for the pool
    # the two writes, on the pool's own thread; the bank create and the search are not pooled
    assert pool.threads == ["membank-write_0", "membank-write_0"]
