"""The task runner the sweeps run their tasks on, chosen by the settings.

- `MEMBANK_TASK_RUNNER=threads` (default): Prefect's thread pool in the flow run's process.
- `MEMBANK_TASK_RUNNER=dask`: prefect-dask's `DaskTaskRunner` (the `dask` extra), on the
  cluster at `MEMBANK_DASK_ADDRESS` (`tcp://scheduler:8786`, started with `dask scheduler`
  and `dask worker` on each machine), or without one on a local cluster of
  `MEMBANK_DASK_WORKERS` processes (one thread each) made for the flow run. Each task opens
  its own context on the storage (`flows.tasks.bank_task`), so a worker needs the same
  MEMBANK_* and storage credentials as the flow run, and PREFECT_API_URL.

Ray (`prefect-ray`'s `RayTaskRunner`) would plug in the same way; it is not installed or
tested here (see README "Operations").
"""

from __future__ import annotations

from typing import Any

from prefect.task_runners import ThreadPoolTaskRunner

from memory.errors import InvalidInput
from memory.settings import Settings

RUNNERS = ("threads", "dask")


def sweep_task_runner(settings: Settings | None = None) -> Any:
    """Return the task runner the settings choose (a fresh one: a flow holds its own).

    Raises:
        InvalidInput: MEMBANK_TASK_RUNNER names no runner, `dask` without the `dask` extra
            installed, or MEMBANK_DASK_WORKERS under 1.
    """
    chosen = settings or Settings()
    kind = chosen.task_runner.strip().lower()
    if kind not in RUNNERS:
        raise InvalidInput(
            f"MEMBANK_TASK_RUNNER={chosen.task_runner!r} is not a task runner: use "
            + " or ".join(RUNNERS)
        )
    if kind == "threads":
        return ThreadPoolTaskRunner()
    try:
        from prefect_dask.task_runners import DaskTaskRunner
    except ImportError as exc:
        raise InvalidInput(
            "MEMBANK_TASK_RUNNER=dask needs the dask extra: uv sync --extra dask "
            "(prefect-dask and distributed)"
        ) from exc
    if chosen.dask_address:
        return DaskTaskRunner(address=chosen.dask_address)
    if chosen.dask_workers < 1:
        raise InvalidInput(f"MEMBANK_DASK_WORKERS must be at least 1, got {chosen.dask_workers}")
    return DaskTaskRunner(
        cluster_class="distributed.LocalCluster",
        cluster_kwargs={
            "n_workers": chosen.dask_workers,
            "threads_per_worker": 1,
            "processes": True,
            "dashboard_address": None,
        },
    )
