"""Isolation properties of long-term memory over random users, agents, scopes and operations.

Ids include hostile ones (quotes, SQL and glob wildcards, backslashes, unicode). Each example
runs in a fresh account of one store per test function (its own long-term bank), and checks
every read against a plain model of who may see what: two users never see each other's
memories, and an agent sees another agent's memories of the same user only when they were
saved user-wide.
"""

from __future__ import annotations

import itertools
import json
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.agents import longterm, tools, wipe
from memory.context import Context
from memory.errors import NotFound
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder

HOSTILE = [
    "alice",
    "bob",
    "x' OR '1'='1",
    "%",
    "_",
    "*",
    "a%",
    "a_",
    "a*",
    "\\",
    "a\\'",
    '"; DROP TABLE entries; --',
    "Zoë",
    "用户",
    "🙂",
    " padded ",
    "scope:user",
]
IDS = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(st.characters(exclude_categories=["Cc", "Cs"]), min_size=1, max_size=12).filter(
        str.strip
    ),
)
AGENTS = st.one_of(st.none(), IDS)


@dataclass(frozen=True)
class Saved:
    """One memory the model expects to be stored."""

    id: str
    user: str
    agent: str | None
    scope: str


def may_see(memory: Saved, user: str, agent: str | None) -> bool:
    """The visibility rule: the user's own; for an agent, user-wide ones and its own."""
    if memory.user != user:
        return False
    return agent is None or memory.scope == "user" or memory.agent == agent


@pytest.fixture
def store(tmp_path: Path) -> LanceStore:
    """One store per test function; each of its examples takes a fresh account on it."""
    return LanceStore(str(tmp_path / "db"))


def _fresh(store: LanceStore) -> Context:
    return Context(store=store, account=uuid.uuid4().hex, embedder=hashing_embedder)


def _check_reads(ctx: Context, saved: list[Saved], viewers: list[tuple[str, str | None]]) -> None:
    for user, agent in viewers:
        expected = {m.id for m in saved if may_see(m, user, agent)}
        listed = longterm.memories(ctx, user=user, agent=agent)
        assert {m.id for m in listed} == expected, (user, agent)
        assert all(m.user == user for m in listed)
        recalled = longterm.recall(ctx, user=user, agent=agent, query="note", k=100)
        assert {h.memory.id for h in recalled} == expected, (user, agent)


OPS = st.lists(
    st.tuples(IDS, AGENTS, st.sampled_from(["user", "agent"]), st.booleans()),
    min_size=1,
    max_size=6,
)


@pytest.mark.slow  # 25 generated scenarios: the full suite runs them
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS, extra_agent=IDS)
def test_users_never_see_each_other_and_agents_see_only_user_wide_or_their_own(
    store: LanceStore, ops: list[tuple[str, str | None, str, bool]], extra_agent: str
) -> None:
    ctx = _fresh(store)
    saved: list[Saved] = []
    for n, (user, agent, scope, through_tool) in enumerate(ops):
        where = scope if agent is not None else "user"
        content = f"note {n} about {user}"
        if through_tool:
            result = tools.dispatch(
                ctx, user, agent, "memory_remember", _json(content=content, scope=where)
            )
            assert result.ok and result.memory is not None, result.error
            memory = result.memory
        else:
            memory = longterm.remember(ctx, user=user, agent=agent, content=content, scope=where)
        saved.append(Saved(memory.id, user, agent, where))
    users = sorted({m.user for m in saved})
    viewers = sorted(
        {(m.user, a) for m in saved for a in (None, m.agent, extra_agent)}
        | {(u, m.agent) for u in users for m in saved[:2]},
        key=repr,
    )
    _check_reads(ctx, saved, viewers)

    # forgetting through the wrong user or an agent that cannot see it fails and keeps it
    for memory, (user, agent) in itertools.product(saved[:3], viewers[:4]):
        if not may_see(memory, user, agent):
            with pytest.raises(NotFound):
                longterm.forget(ctx, user=user, agent=agent, memory_id=memory.id)
    _check_reads(ctx, saved, viewers)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(users=st.lists(IDS, min_size=2, max_size=5, unique=True), doomed=st.integers(0, 4))
def test_wiping_one_user_removes_exactly_that_users_memories(
    store: LanceStore, users: list[str], doomed: int
) -> None:
    ctx = _fresh(store)
    saved = [
        Saved(longterm.remember(ctx, user=u, agent=a, content=f"note {u}", scope=s).id, u, a, s)
        for u in users
        for a, s in ((None, "user"), ("agent-1", "agent"))
    ]
    gone = users[doomed % len(users)]

    receipt = wipe.wipe_user(ctx, gone)

    assert receipt.counts["long_term"] == 2
    left = [m for m in saved if m.user != gone]
    _check_reads(ctx, left, [(u, a) for u in users for a in (None, "agent-1", "agent-2")])


def _json(**fields: str) -> str:
    return json.dumps(fields)


def test_the_model_rule_itself() -> None:
    """The rule the properties check, on hand-picked cases (so a wrong model fails here)."""
    wide = Saved("1", "ann", "chef", "user")
    own = Saved("2", "ann", "chef", "agent")
    assert may_see(wide, "ann", "coach") and not may_see(own, "ann", "coach")
    assert may_see(own, "ann", "chef") and may_see(own, "ann", None)
    assert not may_see(replace(wide, user="bob"), "ann", None)
