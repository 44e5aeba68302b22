"""Storage races with another process, as the installed LanceDB reports them, and the
store's policy that reruns only those (two handles on one table stand in for two processes)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance.commit import CommitConflictError
from lance.optimize import Compaction

from memory.retry import RetryPolicy
from memory.store.retry import STORE_RETRY, lost_race, pruned_under, race_of

MATERIALIZE: dict[str, Any] = {
    "materialize_deletions": True,
    "materialize_deletions_threshold": 0.0,
}


@pytest.fixture
def uri(tmp_path: Path) -> str:
    """A table of one big fragment and three one-row fragments."""
    path = str(tmp_path / "t.lance")
    lance.write_dataset(pa.table({"id": list(range(100))}), path)
    for i in range(3):
        lance.write_dataset(pa.table({"id": [1000 + i]}), path, mode="append")
    return path


def test_a_commit_preempted_by_another_is_a_conflict_by_its_type(uri: str) -> None:
    stale = lance.dataset(uri)
    lance.dataset(uri).optimize.compact_files(
        materialize_deletions=True, materialize_deletions_threshold=0.0
    )  # the other process rewrites
    fragment = stale.get_fragments()[0].metadata
    delete = lance.LanceOperation.Delete(
        updated_fragments=[fragment], deleted_fragment_ids=[], predicate="id = 4"
    )
    with pytest.raises(CommitConflictError) as lost:
        lance.LanceDataset.commit(uri, delete, read_version=stale.version, max_retries=0)
    assert lost.value.retryable
    assert race_of(lost.value) == "conflict"


def test_a_conflict_no_retry_resolves_is_not_a_race() -> None:
    assert race_of(CommitConflictError("incompatible", retryable=False)) is None


def test_a_rewrite_that_lost_to_a_delete_is_a_conflict_by_its_message(uri: str) -> None:
    lance.dataset(uri).delete("id = 1")
    dataset = lance.dataset(uri)
    rewrites = [task.execute(dataset) for task in Compaction.plan(dataset, MATERIALIZE).tasks]
    lance.dataset(uri).delete("id = 2")  # committed first by the other process
    with pytest.raises(OSError) as lost:
        Compaction.commit(dataset, rewrites, MATERIALIZE)
    assert not isinstance(lost.value, CommitConflictError)  # Lance gives it no type of its own
    assert race_of(lost.value) == "conflict"


def test_two_config_commits_at_once_are_a_conflict(uri: str) -> None:
    stale = lance.dataset(uri)
    lance.dataset(uri).update_config({"k": "1"})
    with pytest.raises(OSError) as lost:
        stale.update_config({"k": "2"})
    assert race_of(lost.value) == "conflict"


def test_a_read_of_a_pruned_version_is_gone(uri: str) -> None:
    stale = lance.dataset(uri)
    other = lance.dataset(uri)
    other.delete("id = 3")
    other.optimize.compact_files(materialize_deletions=True, materialize_deletions_threshold=0.0)
    lance.dataset(uri).cleanup_old_versions(older_than=timedelta(0), delete_unverified=True)
    with pytest.raises((OSError, RuntimeError, ValueError)) as lost:
        stale.to_table(columns=["id"])
    assert race_of(lost.value) == "gone"
    assert pruned_under(lost.value) and lost_race(lost.value)


def test_other_errors_are_not_races() -> None:
    assert race_of(OSError("No space left on device")) is None
    assert race_of(KeyError("not found")) is None  # not a storage error at all
    assert race_of(RuntimeError("lance error: Not found: x/_deletions/1.arrow")) == "gone"


def test_the_store_policy_reruns_only_races_and_gives_up() -> None:
    waits: list[float] = []
    policy = RetryPolicy(attempts=3, backoff_seconds=0, sleep=waits.append)
    calls: list[int] = []
    resets: list[int] = []

    def conflict() -> None:
        calls.append(1)
        raise OSError("Retryable commit conflict for version 6: preempted")

    with pytest.raises(OSError, match="commit conflict"):
        policy.run(conflict, when=lost_race, reset=lambda: resets.append(1))
    assert (len(calls), len(resets), len(waits)) == (3, 2, 2)
    calls.clear()

    def broken() -> None:
        calls.append(1)
        raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space"):
        policy.run(broken, when=lost_race, reset=lambda: None)
    assert len(calls) == 1


def test_the_default_store_policy_waits_a_bounded_time() -> None:
    waits: list[float] = []
    policy = replace(STORE_RETRY, sleep=waits.append)

    with pytest.raises(RuntimeError):
        policy.run(lambda: _gone(), when=lost_race)

    assert len(waits) == 5  # six runs in all
    assert 0 < sum(waits) <= 3.5  # two processes racing on one table settle within that


def _gone() -> None:
    raise RuntimeError("lance error: Not found: t.lance/data/1.lance")
