"""The agent memory step of `membank demo`: two conversations of one user with one agent.

The first conversation goes into working memory (a tool call and its result among its
turns) and saves a preference to long-term memory; ending it merges it into the session
summary through the `membank-session-merge` flow. The second conversation starts with that
summary and the preference, recalled for the user's first message. The assistant's lines
are scripted (labelled as such): the point is what the memory layers hand the model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory.agents import longterm, preload, session, wipe, working
from memory.agents.registry import get_agent
from memory.agents.turns import ToolCall, Turn
from memory.context import Context
from memory.errors import MembankError

Step = Callable[[str, Any], None]
USER = "maya"
AGENT = "concierge"
SCRIPTED = "[scripted demo assistant]"
MAX_TOKENS = 180
"""A small working-memory budget, so the demo shows the oldest turns summarized."""
PREFERENCE = "Maya is vegetarian and avoids fish too."


def _first_conversation(ctx: Context, conversation: str) -> list[str]:
    """Store the first conversation's turns; the assistant saves the preference with a tool."""
    remember = ToolCall(
        id="call-1",
        name="memory_remember",
        arguments='{"content": "' + PREFERENCE + '", "type": "preference", "tags": ["food"]}',
    )
    saved = longterm.remember(
        ctx, user=USER, agent=AGENT, content=PREFERENCE, type="preference", tags=["food"]
    )
    turns = [
        Turn(role="user", content="I'm planning a long weekend in Lisbon from 14 to 17 May."),
        Turn(role="assistant", content=f"{SCRIPTED} Lovely! Hotel near Alfama, or Baixa?"),
        Turn(role="user", content="Alfama, under 150 euros a night. Remember I'm vegetarian."),
        Turn(role="assistant", content="", tool_calls=[remember]),
        Turn(role="tool", tool_call_id="call-1", name="memory_remember", content=saved.id),
        Turn(role="assistant", content=f"{SCRIPTED} Noted. I shortlisted Casa Alfama, 140 euros."),
        Turn(role="user", content="Book Casa Alfama, and I land at 09:40 on the 14th."),
    ]
    working.add_turns(ctx, conversation, turns, user=USER, agent=AGENT)
    return [f"{t.role}: {t.text()}" for t in turns]


def _end(ctx: Context, conversation: str, trigger: session.SessionMergeTrigger) -> None:
    """End the conversation: its merge runs as a Prefect flow (on a temporary server)."""
    from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS as STARTUP
    from prefect.settings import temporary_settings

    from flows.demo_sweeps import STARTUP_SECONDS, _prefect_unreachable

    with temporary_settings({STARTUP: STARTUP_SECONDS}):
        try:
            session.end_conversation(
                ctx, user=USER, agent=AGENT, conversation=conversation, trigger=trigger
            )
        except RuntimeError as exc:  # Prefect: API not reachable, temporary server timed out
            raise MembankError(_prefect_unreachable(exc)) from exc


def run_layers_demo(ctx: Context, uri: str, step: Step) -> None:
    """Show working, session and long-term memory across two conversations."""
    from flows.session_merge import flow_trigger

    wipe.wipe_user(ctx, USER)  # a re-run of the demo starts from nothing
    agent = get_agent(ctx, AGENT)
    working_config, long_term = agent.memory.working(), agent.memory.long_term()
    assert working_config is not None and long_term is not None  # the shipped concierge
    step(
        f"agent {agent.id}: memory layers",
        [
            f"layers: {', '.join(agent.memory.layers())}",
            f"banks: {', '.join(agent.memory_banks())}",
        ],
    )
    lines = _first_conversation(ctx, "maya-trip-1")
    context = working.context(ctx, "maya-trip-1", max_tokens=MAX_TOKENS)
    step(
        "conversation 1 in working memory (a tool call and its result stay together)",
        [
            *lines,
            f"context within {MAX_TOKENS} tokens: {context.tokens} tokens, {len(context.kept_ids)} "
            f"turns verbatim, {len(context.summarized_ids)} summarized by {context.summarizer}",
            *[f"  -> {m.role}: {m.text()[:90]}" for m in context.messages],
        ],
    )
    _end(ctx, "maya-trip-1", flow_trigger(uri))
    summary = session.session_summary(ctx, USER, AGENT)
    made = f"v{summary.version} by {summary.summarizer}" if summary else "none"
    step(
        "end of conversation 1: session merge (Prefect flow membank-session-merge)",
        [
            "ran as a flow run in this process; with `membank serve`, end_conversation "
            "schedules the deployment and returns at once",
            f"summary {made}",
        ],
    )
    opening = "Where should I have dinner on my first evening?"
    start = session.start_conversation(ctx, user=USER, agent=AGENT)
    loaded = preload.preload(
        ctx, user=USER, agent=AGENT, message=opening, max_memories=long_term.max_memories
    )
    step(
        "conversation 2 starts with the session summary and a recalled preference",
        [
            f"user: {opening}",
            *[
                f"system (session summary): {line}"
                for m in start
                for line in m.content.splitlines()
            ],
            *[f"system (pre-loaded): {preload.memory_line(found)}" for found in loaded.memories],
        ],
    )
