"""Flow tasks retry transient failures only: a missing bank or bad input fails at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect.states import Failed

from flows.retry import transient
from memory.errors import Conflict, InvalidInput, NotFound, StorageError


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (NotFound("no bank"), False),
        (InvalidInput("bad path"), False),
        (Conflict("name taken"), False),
        (StorageError("commit conflict"), True),
        (OSError("disk"), True),
    ],
)
def test_only_transient_failures_are_retried(error: Exception, retried: bool) -> None:
    assert transient(None, None, Failed(data=error)) is retried


def test_every_flow_task_uses_the_condition() -> None:
    import flows.compaction_sweep as sweep
    import flows.export as export
    import flows.ingest as ingest
    import flows.retention_sweep as retention

    tasks = [
        sweep.evaluate,
        sweep.compact_with_summary,
        sweep.compact_without_summary,
        sweep.prune_bank,
        export.export_bank,
        ingest.ingest_files,
        retention.retain,
    ]
    assert all(t.retry_condition_fn is transient for t in tasks)


def test_ingest_into_a_missing_bank_fails_with_not_found(prefect_api: None, tmp_path: Path) -> None:
    from flows.ingest import ingest_flow

    source = tmp_path / "rows.jsonl"
    source.write_text('{"key": "k", "content": "x"}\n', "utf-8")
    with pytest.raises(NotFound):
        ingest_flow(bank="no-such-bank", paths=[str(source)], data=str(tmp_path / "store"))
