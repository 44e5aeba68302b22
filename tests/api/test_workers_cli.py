"""`membank api --workers N`: more than one worker with in-process jobs, or fewer than one,
is exit 2 with a message saying what to set, before anything is served; and MEMBANK_JOBS
must name a runner the API knows."""

from __future__ import annotations

import pytest

from flows.cli import main
from memory.api.state import ApiState
from memory.context import Context
from memory.errors import InvalidInput
from memory.settings import Settings


@pytest.mark.parametrize("workers", ["2", "0"])
def test_workers_without_durable_jobs_exit_2(
    ctx: Context, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    monkeypatch.delenv("MEMBANK_JOBS", raising=False)
    code = main(["api", "--workers", workers], context=lambda data: ctx)
    err = capsys.readouterr().err
    assert code == 2
    assert ("MEMBANK_JOBS=prefect" in err) if workers == "2" else ("1 or more" in err)


def test_prefect_jobs_need_an_api_and_a_known_runner(
    ctx: Context, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    folder = tmp_path_factory.mktemp("exports")
    for jobs, said in (("prefect", "PREFECT_API_URL"), ("cron", "process or prefect")):
        base = Context(store=ctx.store, account="x", settings=Settings(jobs=jobs))
        with pytest.raises(InvalidInput, match=said):
            ApiState.open(base, exports_dir=folder)
