"""The long sweeps publish a progress artifact on their flow run: made at 0, moved as banks
and partitions finish, 100 at the end (real flow runs under the temporary Prefect API)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from compaction_support import make_bank, write_turns

import flows.tasks
from memory.context import Context


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[UUID, float]]:
    """Every progress update the flows send, as (artifact id, percent), each still sent to
    the Prefect API (the server keeps only an artifact's last value, not its history)."""
    calls: list[tuple[UUID, float]] = []
    real = flows.tasks.update_progress_artifact

    def recording(artifact_id: UUID, progress: float, **kwargs: Any) -> Any:
        calls.append((artifact_id, progress))
        return real(artifact_id, progress, **kwargs)

    monkeypatch.setattr(flows.tasks, "update_progress_artifact", recording)
    return calls


def progress_artifact(flow_run_id: UUID | None, key: str) -> Any:
    """Return the one progress artifact `key` of a flow run, as the Prefect API holds it."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        ArtifactFilterKey,
    )

    assert flow_run_id is not None
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                key=ArtifactFilterKey(any_=[key]),
                flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]),
            )
        )
    (artifact,) = found
    assert artifact.type == "progress"
    return artifact


def check_trail(sent: list[tuple[UUID, float]], artifact: Any, at_least: int) -> None:
    """The updates went to the run's artifact, forward only, and ended at 100."""
    assert {artifact_id for artifact_id, _ in sent} == {artifact.id}
    percents = [percent for _, percent in sent]
    assert len(percents) >= at_least, percents
    assert 0 < percents[0] < 100 and percents[-1] == 100.0
    assert percents == sorted(percents)
    assert float(artifact.data) == 100.0
    assert artifact.updated > artifact.created


def test_compaction_sweep_progress_moves_per_bank_and_partition(
    prefect_api: None, data: str, writer: Context, sent: list[tuple[UUID, float]]
) -> None:
    from flows.compaction_sweep import PROGRESS_KEY, compaction_sweep

    chat = make_bank(writer, "chat", max_turns=5, compaction_prompt=None)
    write_turns(writer, chat, "p1", 8)
    write_turns(writer, chat, "p2", 7)
    shed = make_bank(writer, "shed", max_turns=4, compaction_prompt=None)
    write_turns(writer, shed, "q", 6)

    state = compaction_sweep(data=data, return_state=True)

    assert state.is_completed()
    artifact = progress_artifact(state.state_details.flow_run_id, PROGRESS_KEY)
    # two banks checked, three partitions compacted: five steps, then the finish
    check_trail(sent, artifact, at_least=5)
    assert "3 partitions compacted in 2 banks, 0 failures" in artifact.description


def test_retention_sweep_progress_moves_per_bank(
    prefect_api: None, data: str, writer: Context, sent: list[tuple[UUID, float]]
) -> None:
    from flows.retention_sweep import PROGRESS_KEY, retention_sweep

    for name in ("short", "keep", "third"):
        write_turns(writer, make_bank(writer, name, retention_days=30), "k", 2)

    state = retention_sweep(data=data, return_state=True)

    assert state.is_completed()
    artifact = progress_artifact(state.state_details.flow_run_id, PROGRESS_KEY)
    check_trail(sent, artifact, at_least=3)
    assert [round(p) for _, p in sent] == [33, 67, 100, 100]
    assert "3 banks done" in artifact.description
