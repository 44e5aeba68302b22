"""Session memory: the merge core, one rolling summary per user x agent, concurrent merges
(threads and processes) counted exactly once, the next conversation's start, the wipe."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ThreadPoolExecutor

import pytest
from session_support import AppendingCompleter, merge_in_child, write_conversation

from memory.agents import session
from memory.agents.session import SessionMergeRequest
from memory.agents.session_merge import MergeResult, RunningSummary, SessionMessage, merge_session
from memory.context import Context
from memory.errors import InvalidInput, ProviderError
from memory.providers.extractive import ExtractiveCompleter
from memory.providers.tokens import count_tokens
from memory.testing import ScriptedCompleter


def appending(ctx: Context) -> Context:
    ctx.completer = AppendingCompleter
    return ctx


def msg(n: int, text: str) -> SessionMessage:
    return SessionMessage(id=f"m{n}", speaker="ann", content=text)


def test_merge_core_merges_only_what_the_summary_does_not_cover() -> None:
    first = merge_session(
        [msg(1, "I live in Lyon."), msg(2, "I like jazz.")],
        running_summary=None,
        completer=AppendingCompleter(),
        max_tokens=200,
        instructions="session",
    )
    assert first == MergeResult(
        "ann: I live in Lyon.\nann: I like jazz.", frozenset({"m1", "m2"}), ("m1", "m2")
    )
    running = RunningSummary(first.summary, first.covered_message_ids)
    again = merge_session(
        [msg(2, "I like jazz."), msg(3, "I moved to Nice."), msg(3, "I moved to Nice.")],
        running_summary=running,
        completer=AppendingCompleter(),
        max_tokens=200,
        instructions="session",
    )
    assert again.merged_message_ids == ("m3",)
    assert again.summary.count("jazz") == 1 and again.summary.endswith("ann: I moved to Nice.")
    nothing = merge_session(
        [msg(1, "I live in Lyon.")],
        running_summary=running,
        completer=ScriptedCompleter(),  # never called: it would raise
        max_tokens=200,
        instructions="session",
    )
    assert nothing.summary == first.summary and nothing.merged_message_ids == ()


def test_merge_core_covers_tool_results_without_summarizing_them() -> None:
    tool = SessionMessage(id="m2", speaker="memory_remember", content="")  # a tool's result
    result = merge_session(
        [msg(1, "Remember I like jazz."), tool],
        running_summary=None,
        completer=AppendingCompleter(),
        max_tokens=200,
        instructions="session",
    )
    assert result.summary == "ann: Remember I like jazz."
    assert result.merged_message_ids == ("m1", "m2")
    only_tool = merge_session(
        [SessionMessage(id="m3", speaker="memory_recall", content="")],
        running_summary=RunningSummary(result.summary, result.covered_message_ids),
        completer=ScriptedCompleter(),  # never called: it would raise
        max_tokens=200,
        instructions="session",
    )
    assert only_tool.summary == result.summary and only_tool.merged_message_ids == ("m3",)


def test_merge_core_keeps_the_summary_within_max_tokens() -> None:
    long = [msg(n, f"Fact number {n}: the code for door {n} is {n * 7919}.") for n in range(60)]
    result = merge_session(
        long, running_summary=None, completer=ExtractiveCompleter(), max_tokens=60, instructions="s"
    )
    assert count_tokens(result.summary) <= 60
    assert result.summary.startswith("[extractive summary]")  # the offline label


def test_merge_core_refuses_a_failed_or_empty_summary() -> None:
    for reply in (ProviderError("model down"), "   "):
        with pytest.raises(ProviderError):
            merge_session(
                [msg(1, "x")],
                running_summary=None,
                completer=ScriptedCompleter().enqueue(reply),
                max_tokens=100,
                instructions="s",
            )
    with pytest.raises(InvalidInput, match="max_tokens must be at least 16"):
        merge_session(
            [msg(1, "x")],
            running_summary=None,
            completer=AppendingCompleter(),
            max_tokens=3,
            instructions="s",
        )


def test_the_next_conversation_starts_with_the_summary(ctx: Context) -> None:
    appending(ctx)
    assert session.start_conversation(ctx, user="ann", agent="concierge") == []
    write_conversation(ctx, "c1", "ann", "concierge", "My cat is called Miso.")
    session.end_conversation(
        ctx, user="ann", agent="concierge", conversation="c1", trigger=session.inline_trigger(ctx)
    )
    [start] = session.start_conversation(ctx, user="ann", agent="concierge")
    assert start.role == "system" and "ann: My cat is called Miso." in start.content
    assert session.start_conversation(ctx, user="ann", agent="other-agent") == []
    assert session.start_conversation(ctx, user="bob", agent="concierge") == []
    found = session.session_summary(ctx, "ann", "concierge")
    assert found is not None and found.version == 1 and found.conversations == ["c1"]
    assert found.summarizer.startswith("test/appending")


def test_end_conversation_returns_after_handing_the_request_over(ctx: Context) -> None:
    requests: list[SessionMergeRequest] = []
    session.end_conversation(ctx, user="ann", agent="a", conversation="c9", trigger=requests.append)
    assert requests == [
        SessionMergeRequest(account="acme", user="ann", agent="a", conversation="c9")
    ]
    assert session.session_summary(ctx, "ann", "a") is None  # nothing merged on the user's path
    with pytest.raises(InvalidInput, match="user"):
        session.end_conversation(
            ctx, user=" ", agent="a", conversation="c9", trigger=requests.append
        )
    assert len(requests) == 1


def test_a_failed_merge_changes_nothing_and_a_retry_merges(ctx: Context) -> None:
    write_conversation(ctx, "c1", "ann", "bot", "Remember my size: 42.")
    ctx.completer = lambda: ScriptedCompleter().enqueue(ProviderError("timeout"))
    with pytest.raises(ProviderError):
        session.merge_conversation(ctx, user="ann", agent="bot", conversation="c1")
    assert session.session_summary(ctx, "ann", "bot") is None
    appending(ctx)
    found = session.merge_conversation(ctx, user="ann", agent="bot", conversation="c1")
    assert found is not None and "size: 42" in found.summary


def assert_each_once(ctx: Context, user: str, agent: str, facts: list[str]) -> None:
    found = session.session_summary(ctx, user, agent)
    assert found is not None
    for fact in facts:
        assert found.summary.count(fact) == 1, (fact, found.summary)
    assert len(found.covered_message_ids) == len(set(found.covered_message_ids)) == 2 * len(facts)
    assert len(found.conversations) == len(set(found.conversations)) == len(facts)
    bank = session.session_bank(ctx)
    key = session.pair_key(user, agent)
    assert ctx.store.count(bank.id, f"key = '{key}'") == 1  # one rolling summary


def test_conversations_ending_at_once_are_each_merged_once_threads(ctx: Context) -> None:
    appending(ctx)
    facts = [f"Fact {n}: my locker is {n}13." for n in range(6)]
    for n, fact in enumerate(facts):
        write_conversation(ctx, f"c{n}", "ann", "bot", fact)
    conversations = [f"c{n}" for n in range(6)] + ["c0", "c3"]  # two conversations ended twice
    with ThreadPoolExecutor(4) as pool:
        done = list(
            pool.map(
                lambda c: session.merge_conversation(ctx, user="ann", agent="bot", conversation=c),
                conversations,
            )
        )
    assert all(s is not None for s in done)
    assert_each_once(ctx, "ann", "bot", facts)
    assert session.session_summary(ctx, "ann", "bot").version == 6  # type: ignore[union-attr]


@pytest.mark.process
def test_conversations_ending_at_once_are_each_merged_once_processes(ctx: Context) -> None:
    appending(ctx)
    facts = [f"Fact {n}: my badge is {n}77." for n in range(4)]
    for n, fact in enumerate(facts):
        write_conversation(ctx, f"p{n}", "ann", "bot", fact)
    session.session_bank(ctx)  # made once here, not raced for by the children
    args = [(ctx.store.uri, ctx.account, "ann", "bot", f"p{n}") for n in range(4)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        versions = pool.starmap(merge_in_child, args)
    assert sorted(versions) == [1, 2, 3, 4]  # serialized: each saw the one before
    assert_each_once(ctx, "ann", "bot", facts)


def test_wipe_removes_the_users_summaries_for_good(ctx: Context) -> None:
    appending(ctx)
    write_conversation(ctx, "a1", "ann", "bot", "Ann's secret is 5521.")
    write_conversation(ctx, "a2", "ann", "helper", "Ann's other secret is 8812.")
    write_conversation(ctx, "b1", "bob", "bot", "Bob likes tea.")
    for user, agent, conversation in [
        ("ann", "bot", "a1"),
        ("ann", "helper", "a2"),
        ("bob", "bot", "b1"),
    ]:
        session.merge_conversation(ctx, user=user, agent=agent, conversation=conversation)
    bank = session.session_bank(ctx)
    [receipt] = session.wipe_user(ctx, "ann")
    assert (receipt.layer, receipt.table, receipt.rows_removed) == ("session", bank.id, 2)
    assert session.session_summary(ctx, "ann", "bot") is None
    assert session.session_summary(ctx, "ann", "helper") is None
    assert session.session_summary(ctx, "bob", "bot") is not None
    assert ctx.store.old_version_count(bank.id) == 0 and not ctx.store.has_deleted_rows(bank.id)
    assert [w.rows_removed for w in session.wipe_user(ctx, "ann")] == [0]
