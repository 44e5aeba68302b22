"""The API's long work as data, for a job service that runs it in another process.

An in-process job is a closure; a durable one (`memory.ops.prefect_jobs`) is a flow run of
the `membank-job` deployments, so the work travels as its kind and its request as JSON and
`run` does it there (in `flows/jobs.py`). The result comes back as JSON too; `typed_result`
turns an export's back into the `ExportResult` the export endpoints read.

Kinds and their requests: `compact` ({bank, key}), `test-compaction` (a `lab.LabTest`),
`export` (an `exports.ExportRequest`; the file is `<exports_dir>/<job id>.<format>`) and
`session-merge` (a `SessionMergeRequest`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from memory.context import Context
from memory.errors import InvalidInput
from memory.ops import agents, compaction, lab
from memory.ops.agents import SessionMergeRequest
from memory.transfer.export.records import ExportResult

KINDS = ("compact", "test-compaction", "export", "session-merge")


@dataclass(frozen=True)
class Outcome:
    """What a job made: its result as JSON, and a file for download (exports)."""

    result: Any
    file: str | None = None


def run(
    ctx: Context, kind: str, request: dict[str, Any], *, job_id: str, exports_dir: Path
) -> Outcome:
    """Do the job `kind` asks with `request` (JSON) as `ctx`'s account.

    Raises:
        InvalidInput: an unknown kind or a request that does not fit it.
        MembankError: whatever the same call made in the API process raises.
    """
    if kind == "compact":
        bank = str(request["bank"])
        key = request.get("key")
        prepared = compaction.prepare(ctx, compaction.CompactNow(bank, key))
        return Outcome(as_json(compaction.run(ctx, prepared).partitions))
    if kind == "test-compaction":
        test = lab.LabTest.model_validate(request)
        return Outcome(as_json(lab.run_prepared(ctx, lab.prepare_test(ctx, test))))
    if kind == "export":
        from memory.ops import exports

        wanted = exports.ExportRequest.model_validate(request)
        path = exports_dir / f"{job_id}.{wanted.format}"
        return Outcome(as_json(exports.write(ctx, wanted, path)), str(path))
    if kind == "session-merge":
        merge = SessionMergeRequest.model_validate(request)
        if merge.account != ctx.account:
            raise InvalidInput("a session merge of another account")
        return Outcome(as_json(agents.merge_conversation(ctx, merge)))
    raise InvalidInput(f"no job kind {kind!r} (one of {', '.join(KINDS)})")


def as_json(value: Any) -> Any:
    """Return a result (a model, a list of them, or plain data) as JSON-ready data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [as_json(v) for v in value]
    return value


def typed_result(kind: str, result: Any) -> Any:
    """Return a JSON result as the API process reads it (an export's as `ExportResult`)."""
    if kind == "export" and isinstance(result, dict):
        return ExportResult.model_validate(result)
    return result
