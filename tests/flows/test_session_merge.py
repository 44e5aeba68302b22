"""The session-merge flow under a real (temporary) Prefect API: merges an ended conversation,
two ending at once are both merged once, and the trigger schedules the deployment."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from memory.agents import session, working
from memory.agents.session import SessionMergeRequest
from memory.agents.turns import Turn
from memory.context import Context
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder


def writer(data: str) -> Context:
    return Context(store=LanceStore(data), account="acme", embedder=hashing_embedder)


def say(ctx: Context, conversation: str, fact: str) -> None:
    turns = [Turn(role="user", content=fact), Turn(role="assistant", content="Noted.")]
    working.add_turns(ctx, conversation, turns, user="ann", agent="concierge")


def test_the_flow_merges_conversations_each_once(prefect_api: None, tmp_path: Path) -> None:
    from flows.session_merge import flow_trigger, session_merge_flow

    data = str(tmp_path / "db")
    ctx = writer(data)
    say(ctx, "c1", "My favourite colour is teal.")
    summary = session_merge_flow("ann", "concierge", "c1", data=data, account="acme")
    assert summary is not None and summary.version == 1
    assert "teal" in summary.summary and summary.summary.startswith("[extractive summary]")

    say(ctx, "c2", "I work night shifts on Tuesdays.")
    say(ctx, "c3", "My daughter Ines plays the cello.")
    trigger = flow_trigger(data)
    runs = [
        threading.Thread(
            target=trigger,
            args=(
                SessionMergeRequest(account="acme", user="ann", agent="concierge", conversation=c),
            ),
        )
        for c in ("c2", "c3", "c2")
    ]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    found = session.session_summary(ctx, "ann", "concierge")
    assert found is not None and found.version == 3
    assert sorted(found.conversations) == ["c1", "c2", "c3"]
    assert len(found.covered_message_ids) == len(set(found.covered_message_ids)) == 6
    assert "Ines" in found.summary and "night shifts" in found.summary
    [start] = session.start_conversation(ctx, user="ann", agent="concierge")
    assert "teal" in start.content


def test_the_trigger_schedules_the_deployment_and_returns(
    prefect_api: None, tmp_path: Path
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    from flows.session_merge import deployment_trigger, session_merge_flow

    deployment_id = session_merge_flow.to_deployment(name="merge").apply()
    data = str(tmp_path / "db")
    ctx = writer(data)
    session.end_conversation(
        ctx, user="ann", agent="concierge", conversation="c7", trigger=deployment_trigger(data)
    )
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id]))
        )
    assert len(runs) == 1
    assert runs[0].state is not None and runs[0].state.is_scheduled()  # a worker will run it
    assert runs[0].parameters == {
        "user": "ann",
        "agent": "concierge",
        "conversation": "c7",
        "data": data,
        "account": "acme",
    }


def test_the_demo_step_shows_the_summary_and_the_preference_in_conversation_two(
    prefect_api: None, tmp_path: Path
) -> None:
    from flows.demo_layers import run_layers_demo

    data = str(tmp_path / "db")
    ctx = writer(data)
    shown: dict[str, list[str]] = {}
    run_layers_demo(ctx, data, lambda title, lines: shown.update({title: lines}))
    run_layers_demo(ctx, data, lambda title, lines: shown.update({title: lines}))  # re-runs
    [second] = [lines for title, lines in shown.items() if title.startswith("conversation 2")]
    assert any("(session summary)" in line and "Lisbon" in line for line in second)
    assert [line for line in second if "(pre-loaded)" in line] == [
        line for line in second if "(pre-loaded)" in line and "vegetarian" in line
    ]
    assert sum("(pre-loaded)" in line for line in second) == 1
    summary = session.session_summary(ctx, "maya", "concierge")
    assert summary is not None and summary.version == 1  # the re-run started from nothing


def tell(ctx: Context, user: str, conversation: str, fact: str) -> None:
    turns = [Turn(role="user", content=fact), Turn(role="assistant", content="Noted.")]
    working.add_turns(ctx, conversation, turns, user=user, agent="concierge")


def test_a_batch_merges_each_conversation_once_as_tasks_of_one_flow_run(
    prefect_api: None, tmp_path: Path
) -> None:
    from flows.session_merge import MergeItem, session_merge_batch_flow

    data = str(tmp_path / "db")
    ctx = writer(data)
    tell(ctx, "ann", "a1", "My favourite colour is teal.")
    tell(ctx, "ann", "a2", "I work night shifts on Tuesdays.")
    tell(ctx, "bob", "b1", "My daughter Ines plays the cello.")
    asked = [("ann", "a1"), ("ann", "a2"), ("bob", "b1"), ("ann", "a1")]  # a1 asked twice
    merges = [MergeItem(user=u, agent="concierge", conversation=c) for u, c in asked]

    state = session_merge_batch_flow(merges, data=data, account="acme", return_state=True)

    assert state.is_completed()
    ann = session.session_summary(ctx, "ann", "concierge")
    bob = session.session_summary(ctx, "bob", "concierge")
    assert ann is not None and sorted(ann.conversations) == ["a1", "a2"]
    assert len(ann.covered_message_ids) == len(set(ann.covered_message_ids)) == 4
    assert "teal" in ann.summary and "night shifts" in ann.summary
    assert bob is not None and bob.conversations == ["b1"] and "Ines" in bob.summary


def test_the_batching_trigger_schedules_one_run_for_conversations_ending_together(
    prefect_api: None, tmp_path: Path
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    from flows.session_merge import batching_trigger, session_merge_batch_flow

    deployment_id = session_merge_batch_flow.to_deployment(name="merge-batch").apply()
    data = str(tmp_path / "db")
    ctx = writer(data)
    trigger = batching_trigger(data, window=600, quiet=600)  # flushed by hand, not the clock
    for user, conversation in (("ann", "a1"), ("bob", "b1"), ("ann", "a2"), ("ann", "a1")):
        tell(ctx, user, conversation, f"{user} said something in {conversation}.")
        session.end_conversation(
            ctx, user=user, agent="concierge", conversation=conversation, trigger=trigger
        )
    trigger.flush()
    trigger.flush()  # nothing left: schedules nothing

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id]))
        )
    assert len(runs) == 1
    assert runs[0].state is not None and runs[0].state.is_scheduled()  # a worker will run it
    merges = runs[0].parameters["merges"]
    assert [(m["user"], m["conversation"]) for m in merges] == [
        ("ann", "a1"),
        ("bob", "b1"),
        ("ann", "a2"),
    ]
    assert runs[0].parameters["account"] == "acme"


def _request(user: str, conversation: str) -> SessionMergeRequest:
    return SessionMergeRequest(
        account="acme", user=user, agent="concierge", conversation=conversation
    )


def _batches_of(window: float, quiet: float) -> tuple[Any, list[list[str]], threading.Event]:
    from flows.session_merge import MergeItem, _Batcher

    batches: list[list[str]] = []
    scheduled = threading.Event()

    def schedule(items: list[MergeItem], data: str | None, account: str) -> None:
        batches.append([i.conversation for i in items])
        scheduled.set()

    return _Batcher(None, window, schedule, quiet), batches, scheduled


def test_a_burst_of_merges_is_scheduled_once_it_goes_quiet_without_waiting_for_the_window() -> None:
    trigger, batches, scheduled = _batches_of(window=600, quiet=0.05)
    for conversation in ("c1", "c2", "c3"):
        trigger(_request("ann", conversation))
    assert scheduled.wait(60)  # long before the 600 s window
    assert batches == [["c1", "c2", "c3"]]
    scheduled.clear()
    trigger(_request("bob", "c4"))  # after the batch went: the next one
    assert scheduled.wait(60)
    assert batches == [["c1", "c2", "c3"], ["c4"]]


def test_a_steady_stream_of_merges_is_still_scheduled_within_the_window() -> None:
    trigger, batches, scheduled = _batches_of(window=0.05, quiet=600)
    trigger(_request("ann", "c1"))
    assert scheduled.wait(60)  # the window closed although the stream was never quiet
    assert batches == [["c1"]]
    trigger.flush()
    assert batches == [["c1"]]  # nothing left: nothing scheduled twice


def test_a_batch_is_shared_out_with_each_users_merges_together_in_order() -> None:
    from flows.session_merge import MergeItem, shares

    asked = [("ann", "a1"), ("bob", "b1"), ("ann", "a2"), ("cy", "c1"), ("dee", "d1")]
    merges = [MergeItem(user=u, agent="concierge", conversation=c) for u, c in asked]
    split = shares(merges, 2)
    assert len(split) == 2 and sorted(len(s) for s in split) == [2, 3]
    assert sorted(m.conversation for s in split for m in s) == ["a1", "a2", "b1", "c1", "d1"]
    (ann,) = [s for s in split if any(m.user == "ann" for m in s)]
    assert [m.conversation for m in ann if m.user == "ann"] == ["a1", "a2"]
    assert [len(s) for s in shares(merges[:1], 4)] == [1]
    assert shares([], 4) == []


def test_a_failed_merge_fails_the_batch_after_the_others_merged(
    prefect_api: None, tmp_path: Path
) -> None:
    from flows.session_merge import MergeItem, session_merge_batch_flow

    data = str(tmp_path / "db")
    ctx = writer(data)
    tell(ctx, "ann", "a1", "My favourite colour is teal.")
    tell(ctx, "ann", "a2", "I work night shifts on Tuesdays.")
    merges = [
        MergeItem(user="ann", agent="concierge", conversation="a1"),
        MergeItem(user="ann", agent="x" * 500, conversation="a2"),  # too long: refused
        MergeItem(user="ann", agent="concierge", conversation="a2"),
    ]

    state = session_merge_batch_flow(merges, data=data, account="acme", return_state=True)

    assert state.is_failed() and "1 of 3 merges failed" in str(state.message)
    ann = session.session_summary(ctx, "ann", "concierge")
    assert ann is not None and sorted(ann.conversations) == ["a1", "a2"]


def test_a_storage_failure_retries_the_share_and_each_merge_lands_once(
    prefect_api: None, tmp_path: Path, monkeypatch: Any
) -> None:
    """A transient failure of one merge fails its share's attempt after the others merged;
    the retry finds those merged and merges the failed one: every conversation once."""
    import flows.session_merge as merging
    from flows.session_merge import MergeItem

    data = str(tmp_path / "db")
    ctx = writer(data)
    tell(ctx, "ann", "a1", "My favourite colour is teal.")
    tell(ctx, "ann", "a2", "I work night shifts on Tuesdays.")
    real = merging.agents.merge_conversation
    broken = {"a1"}
    asked: list[str] = []

    def once_broken(ctx: Context, request: SessionMergeRequest) -> Any:
        asked.append(request.conversation)
        if request.conversation in broken:
            broken.clear()
            raise OSError("the disk hiccuped")
        return real(ctx, request)

    monkeypatch.setattr(merging.agents, "merge_conversation", once_broken)
    retried = merging.merge_share_task.with_options(retries=1, retry_delay_seconds=0)
    monkeypatch.setattr(merging, "merge_share_task", retried)
    merges = [MergeItem(user="ann", agent="concierge", conversation=c) for c in ("a1", "a2")]

    state = merging.session_merge_batch_flow(merges, data=data, account="acme", return_state=True)

    assert state.is_completed()
    assert asked == ["a1", "a2", "a1", "a2"]  # the retry went over the share again, in order
    ann = session.session_summary(ctx, "ann", "concierge")
    assert ann is not None and sorted(ann.conversations) == ["a1", "a2"]
    assert ann.version == 2 and len(ann.covered_message_ids) == 4
