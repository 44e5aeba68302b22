"""When a failed task is worth retrying: not when the caller's input is wrong."""

from __future__ import annotations

from typing import Any

from memory.errors import Conflict, InvalidInput, NotFound

PERMANENT = (InvalidInput, NotFound, Conflict)
"""Errors a retry cannot fix: a missing bank, a bad path or parameter, a taken name."""


def transient(task: Any, task_run: Any, state: Any) -> bool:
    """Return False for a permanent error (the task fails at once), True otherwise.

    Used as Prefect's `retry_condition_fn`: a bank that does not exist is not retried three
    times before the run reports it.
    """
    failure = state.result(raise_on_failure=False)
    return not isinstance(failure, PERMANENT)
