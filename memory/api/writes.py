"""The write pool: entry writes (chunking and embedding, the API's heaviest CPU work) run on
threads of their own at a lower OS priority, at most `per_account` writes of one account at
once, so one account writing large entries at full speed does not slow another's reads.

Reads stay on the server's usual threads at normal priority; a write waits (without holding
a thread) for its account's turn, then for a free worker. With the offline MiniLM embedder
the pool embeds with an onnxruntime session of its own, made on a pool thread, so the
session's threads inherit the low priority too (the shared session keeps serving searches).
Each server process has its own pool (with `--workers N`, the limits are per process).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Annotated, TypeVar

from fastapi import Depends, Request

from memory.context import Context
from memory.ports import Embedder
from memory.wiring import embedder_of, own_embedder_of

if TYPE_CHECKING:
    from memory.config import Mode

T = TypeVar("T")
log = logging.getLogger("membank.api")


def _lower_priority(niceness: int) -> None:
    """Lower the calling thread's OS priority by `niceness` (Linux: nice is per thread)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
    except (AttributeError, OSError):  # not Linux, or not allowed: run at normal priority
        log.debug("write pool threads keep their priority")


class WritePool:
    """Runs write work off the event loop, fairly between accounts.

    Args:
        workers: threads running writes (of all accounts).
        per_account: writes of one account running at once; more wait their turn.
        niceness: how much lower the workers' OS priority is (0: the same).
    """

    def __init__(self, *, workers: int = 2, per_account: int = 1, niceness: int = 10) -> None:
        self.per_account = per_account
        self._executor = ThreadPoolExecutor(
            max_workers=workers,
            thread_name_prefix="membank-write",
            initializer=_lower_priority,
            initargs=(niceness,),
        )
        self._turns: dict[str, asyncio.Semaphore] = {}
        self._waiting: dict[str, int] = {}
        self._embedders: dict[tuple[str, int], Embedder] = {}
        self._lock = threading.Lock()

    async def run(self, ctx: Context, work: Callable[[Context], T]) -> T:
        """Return `work(ctx')` run on a pool thread once `ctx.account` has a free turn;
        `ctx'` is `ctx` embedding with the pool's own embedder."""
        account = ctx.account
        turn = self._turns.setdefault(account, asyncio.Semaphore(self.per_account))
        self._waiting[account] = self._waiting.get(account, 0) + 1
        try:
            async with turn:
                local = dataclasses.replace(ctx, embedder=self._embedder_factory(ctx))
                future = self._executor.submit(work, local)
                return await asyncio.wrap_future(future)
        finally:
            self._waiting[account] -= 1
            if not self._waiting[account]:  # nobody holds or waits: forget the account
                del self._waiting[account]
                del self._turns[account]

    def _embedder_factory(self, ctx: Context) -> Callable[[Mode], Embedder]:
        base = ctx.embedder

        def factory(mode: Mode) -> Embedder:
            shared = base(mode)
            if shared is not embedder_of(mode):  # a context's own embedder: keep it
                return shared
            with self._lock:  # called on a pool thread: a new session inherits its priority
                found = self._embedders.get((mode.embedder, mode.dims))
                if found is None:
                    found = own_embedder_of(mode)
                    self._embedders[(mode.embedder, mode.dims)] = found
                return found

        return factory

    def close(self) -> None:
        """Stop the workers (running writes finish)."""
        self._executor.shutdown(wait=True, cancel_futures=True)


def write_pool(request: Request) -> WritePool:
    """Return the app's write pool."""
    found: WritePool = request.app.state.membank_writes
    return found


Writes = Annotated[WritePool, Depends(write_pool)]
