"""The compaction and retention sweeps run as real flows under a temporary Prefect API."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from compaction_support import make_bank, write_turns
from fake_llm_server import Script, openai_endpoint
from flow_support import artifact_table

from memory import banks, entries, purge
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import EntryIn


def test_compaction_sweep_compacts_every_partition_over_a_threshold(
    prefect_api: None, data: str, writer: Context
) -> None:
    from flows.compaction_sweep import compaction_sweep

    chat = make_bank(writer, "chat", max_turns=5)
    write_turns(writer, chat, "p1", 8)
    write_turns(writer, chat, "p2", 3)
    shed = make_bank(writer, "shed", max_turns=4, compaction_prompt=None)
    write_turns(writer, shed, "q", 6)
    other = Context(store=writer.store, account="globex", embedder=writer.embedder)
    theirs = make_bank(other, "theirs", type="general", max_tokens=100)
    write_turns(other, theirs, "g", 12)
    free = make_bank(writer, "free")
    write_turns(writer, free, "k", 9)

    rows = compaction_sweep(data=data)

    by_bank = {row.bank: row for row in rows}
    assert set(by_bank) == {"chat", "shed", "theirs"}  # no trigger: not swept
    assert (by_bank["chat"].partitions, by_bank["chat"].compacted) == (2, 1)
    assert (by_bank["shed"].compacted, by_bank["theirs"].compacted) == (1, 1)
    assert not any(row.failures or row.skipped for row in rows)
    (summary,) = [e for e in entries.load(writer, chat, "p1") if e.kind == "summary"]
    assert summary.content.startswith("[extractive summary]")
    assert "extractive" in summary.metadata["summarizer"]
    assert len(entries.load(writer, chat, "p2")) == 3
    assert len(entries.load(writer, shed, "q")) == 2
    assert len(entries.load(writer, free, "k")) == 9
    assert banks.get(writer, chat.id).summary_count == 1
    assert banks.get(other, theirs.id).summary_count == 1
    assert not any(purge.pending_deletions(writer, b) for b in (chat, shed, theirs))  # final
    published = artifact_table("membank-compaction-sweep")
    reported = {row["bank"]: row for row in published.rows}
    assert reported["chat"] == {
        "bank": "chat",
        "account": "acme",
        "partitions checked": 2,
        "compacted": 1,
        "skipped (reason)": "0",
        "failures": "0",
    }
    assert (reported["theirs"]["account"], reported["theirs"]["compacted"]) == ("globex", 1)
    assert f"Storage: `{Path(data).resolve()}`" in published.description  # which storage


def test_failed_summaries_are_reported_and_nothing_is_deleted(
    prefect_api: None, data: str, writer: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flows.compaction_sweep as sweep

    chat = make_bank(writer, "chat", max_turns=5)
    before = [e.id for e in write_turns(writer, chat, "p1", 8)]
    monkeypatch.setenv("MEMBANK_LLM_MODEL", "openai/gpt-4o-mini")  # blocked in tests
    assert sweep.compact_with_summary.retries == 0  # the provider retries, not the task

    rows = sweep.compaction_sweep(data=data)

    (row,) = rows
    assert row.compacted == 0
    assert len(row.failures) == 1 and row.failures[0].startswith("p1: ")
    assert not row.failures[0].startswith("p1: p1:")  # the key once
    assert "blocked" in row.failures[0]
    assert [e.id for e in entries.load(writer, chat, "p1")] == before
    (reported,) = artifact_table("membank-compaction-sweep").rows
    assert reported["failures"].startswith("p1: ")


def test_retention_sweep_deletes_expired_entries_only(
    prefect_api: None, data: str, writer: Context
) -> None:
    from flows.retention_sweep import retention_sweep

    old = datetime.now(UTC) - timedelta(days=45)
    short = make_bank(writer, "short", retention_days=30)
    keep = make_bank(writer, "keep", type="general", retention_days=None)
    for bank in (short, keep):
        stale = [EntryIn(key="k", content=f"old {i}", created_at=old) for i in range(4)]
        if bank.type == "conversation":
            stale = [s.model_copy(update={"speaker": "s"}) for s in stale]
        entries.write(writer, bank, stale)
        write_turns(writer, bank, "k", 2)

    rows = retention_sweep(data=data)

    by_bank = {row.bank: row for row in rows}
    assert (by_bank["short"].status, by_bank["short"].deleted) == ("deleted", 4)
    assert (by_bank["keep"].status, by_bank["keep"].deleted) == ("untouched", 0)
    assert len(entries.load(writer, short, "k")) == 2
    assert len(entries.load(writer, keep, "k")) == 6
    published = artifact_table("membank-retention-sweep")
    reported = [
        (r["bank"], r["account"], r["retention"], r["status"], r["entries deleted"])
        for r in published.rows
    ]
    assert ("short", "acme", "30 days", "deleted", 4) in reported
    assert ("keep", "acme", "indefinite", "untouched", 0) in reported
    assert f"Storage: `{Path(data).resolve()}`" in published.description


DEADLINE = 30.0
LONG_ENOUGH = 180.0
"""A sweep's deadline far beyond what the Dask sweep of three partitions takes (~10 s)."""
NO_ANSWER = "no answer from its worker"


@pytest.mark.process
@pytest.mark.slow
def test_the_compaction_sweep_runs_its_tasks_on_a_local_dask_cluster(
    prefect_api: None, data: str, writer: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect_dask.task_runners import DaskTaskRunner

    from flows.compaction_sweep import compaction_sweep
    from flows.runners import sweep_task_runner

    monkeypatch.setenv("MEMBANK_TASK_RUNNER", "dask")
    monkeypatch.setenv("MEMBANK_DASK_WORKERS", "2")
    runner = sweep_task_runner()
    assert isinstance(runner, DaskTaskRunner)
    chat = make_bank(writer, "chat", max_turns=5)
    originals = {
        key: write_turns(writer, chat, key, 8, start=100 * i) for i, key in enumerate("abc")
    }

    sweep = compaction_sweep.with_options(task_runner=runner)
    rows = sweep(data=data, deadline_seconds=LONG_ENOUGH)
    if any(NO_ANSWER in failure for row in rows for failure in row.failures):
        # a worker's LanceDB call never returned (lancedb/lancedb#4210): the sweep reported
        # the share at its deadline and stopped the cluster; the next sweep finishes it
        rows = sweep(data=data, deadline_seconds=LONG_ENOUGH)
        assert not any(row.failures for row in rows)
    else:
        assert [(row.bank, row.partitions, row.compacted, row.failures) for row in rows] == [
            ("chat", 3, 3, [])
        ]
    for key, written in originals.items():
        stored = entries.load(writer, chat, key)
        (summary,) = [e for e in stored if e.kind == "summary"]
        kept = {e.id for e in stored if e.kind != "summary"}
        assert set(summary.summary_of) | kept == {e.id for e in written}
        assert not set(summary.summary_of) & kept


@pytest.mark.process
@pytest.mark.slow
def test_a_sweep_whose_worker_stops_answering_ends_at_its_deadline(
    prefect_api: None, data: str, writer: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A share whose worker never answers (here its model call hangs; in the wild a LanceDB
    call that never returns) is reported failed at the sweep's deadline, with nothing
    deleted, and the sweep ends: the runner's exit stops the cluster."""
    from flows.compaction_sweep import compaction_sweep
    from flows.runners import sweep_task_runner

    monkeypatch.setenv("MEMBANK_TASK_RUNNER", "dask")
    monkeypatch.setenv("MEMBANK_DASK_WORKERS", "2")
    monkeypatch.setenv("MEMBANK_LLM_MODEL", "openai/fake-summarizer")
    chat = make_bank(writer, "chat", max_turns=5)
    written = write_turns(writer, chat, "a", 8)
    script = Script(hold=threading.Event())  # set only when the server stops, after the sweep
    with openai_endpoint(script, monkeypatch):
        sweep = compaction_sweep.with_options(task_runner=sweep_task_runner())
        rows = sweep(data=data, deadline_seconds=DEADLINE)
        assert script.requests  # the share called the model and waited for it
        assert [(row.bank, row.compacted, row.failures) for row in rows] == [
            ("chat", 0, [f"a: no answer from its worker within the sweep's {DEADLINE:g} s"])
        ]
        assert [e.id for e in entries.load(writer, chat, "a")] == [e.id for e in written]


def test_a_task_runner_setting_that_names_no_runner_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from flows.runners import sweep_task_runner

    monkeypatch.setenv("MEMBANK_TASK_RUNNER", "ray")
    with pytest.raises(InvalidInput, match=r"MEMBANK_TASK_RUNNER=.ray.*threads or dask"):
        sweep_task_runner()
    monkeypatch.setenv("MEMBANK_TASK_RUNNER", "dask")
    monkeypatch.setenv("MEMBANK_DASK_WORKERS", "0")
    with pytest.raises(InvalidInput, match="MEMBANK_DASK_WORKERS must be at least 1"):
        sweep_task_runner()
