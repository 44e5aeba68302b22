"""Flow tasks retry transient failures only: a missing bank or bad input fails at once, a
provider error (retried by the provider) too, and a task that calls an LLM never retries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prefect.states import Failed

from flows.retry import transient
from memory.errors import Conflict, InvalidInput, NotFound, ProviderError, StorageError


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (NotFound("no bank"), False),
        (InvalidInput("bad path"), False),
        (Conflict("name taken"), False),
        (ProviderError("the model timed out, three times"), False),
        (StorageError("commit conflict"), True),
        (OSError("disk"), True),
    ],
)
def test_only_transient_failures_are_retried(error: Exception, retried: bool) -> None:
    assert transient(None, None, Failed(data=error)) is retried


def _tasks() -> list[Any]:
    import flows.compaction_sweep as sweep
    import flows.export as export
    import flows.ingest as ingest
    import flows.retention_sweep as retention

    return [
        sweep.evaluate,
        sweep.compact_with_summary,
        sweep.compact_without_summary,
        sweep.finish_bank,
        export.export_bank,
        ingest.ingest_files,
        retention.retain,
    ]


def test_every_flow_task_uses_the_condition() -> None:
    assert all(t.retry_condition_fn is transient for t in _tasks())


def test_only_tasks_that_call_no_llm_retry() -> None:
    from flows.compaction_sweep import LLM_TAG

    calls_llm = {t.name for t in _tasks() if LLM_TAG in t.tags}
    assert calls_llm == {"compact_with_summary"}
    assert all((t.retries == 0) == (t.name in calls_llm) for t in _tasks())


def test_ingest_into_a_missing_bank_fails_with_not_found(prefect_api: None, tmp_path: Path) -> None:
    from flows.ingest import ingest_flow

    source = tmp_path / "rows.jsonl"
    source.write_text('{"key": "k", "content": "x"}\n', "utf-8")
    with pytest.raises(NotFound):
        ingest_flow(bank="no-such-bank", paths=[str(source)], data=str(tmp_path / "store"))
