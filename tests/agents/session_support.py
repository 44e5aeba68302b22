"""Helpers of the session-memory tests: a completer that appends (so a message merged twice
shows twice), conversations written to working memory, and the spawned merger's entry point."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from memory.context import Context
from memory.ports import Message
from memory.providers.summarize import parse_compaction_prompt

CACHE = Path(tempfile.gettempdir()) / "membank-test-pycache"


class AppendingCompleter:
    """Returns the previous summary followed by every new line: what was merged, verbatim."""

    model = "test/appending"

    def complete(self, messages: Sequence[Message]) -> str:
        previous, lines, _ = parse_compaction_prompt(messages[-1].content)
        return "\n".join([previous, *lines]).strip()


def write_conversation(ctx: Context, conversation: str, user: str, agent: str, fact: str) -> None:
    """Store a two-turn conversation in working memory whose user turn states `fact`."""
    from memory.agents import working
    from memory.agents.turns import Turn

    working.add_turns(
        ctx,
        conversation,
        [
            Turn(role="user", content=fact),
            Turn(role="assistant", content=f"Noted ({conversation})."),
        ],
        user=user,
        agent=agent,
    )


def merge_in_child(uri: str, account: str, user: str, agent: str, conversation: str) -> int:
    """Merge one conversation in a spawned process; returns the summary's version."""
    sys.pycache_prefix = str(CACHE)
    sys.dont_write_bytecode = False
    from memory.agents import session
    from memory.store.lance import LanceStore
    from memory.testing import hashing_embedder

    ctx = Context(
        store=LanceStore(uri),
        account=account,
        embedder=hashing_embedder,
        completer=AppendingCompleter,
    )
    found = session.merge_conversation(ctx, user=user, agent=agent, conversation=conversation)
    assert found is not None
    return found.version


def merge_killed_before_delete(
    uri: str, account: str, user: str, agent: str, conversation: str
) -> None:
    """Merge one conversation in a spawned process killed (SIGKILL) right after the new
    summary is written, before the old one is deleted."""
    import os
    import signal

    sys.pycache_prefix = str(CACHE)
    sys.dont_write_bytecode = False
    from memory import purge
    from memory.agents import session
    from memory.store.lance import LanceStore
    from memory.testing import hashing_embedder

    def killed(*_args: object, **_kwargs: object) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    purge.delete_final = killed  # type: ignore[assignment]
    ctx = Context(
        store=LanceStore(uri),
        account=account,
        embedder=hashing_embedder,
        completer=AppendingCompleter,
    )
    session.merge_conversation(ctx, user=user, agent=agent, conversation=conversation)
