"""When a failed task is worth retrying: not when the caller's input is wrong, and not a
provider error (the provider retried it already; see `flows.tasks` for the rule)."""

from __future__ import annotations

from typing import Any

from memory.errors import Conflict, InvalidInput, NotFound, ProviderError

PERMANENT = (InvalidInput, NotFound, Conflict)
"""Errors a retry cannot fix: a missing bank, a bad path or parameter, a taken name."""
RETRIED_BELOW = (ProviderError,)
"""Errors a lower layer has retried already: a task retry would only multiply the attempts."""


def transient(task: Any, task_run: Any, state: Any) -> bool:
    """Return False for a permanent or already retried error (the task fails at once), True
    otherwise.

    Used as Prefect's `retry_condition_fn`: a bank that does not exist is not retried three
    times before the run reports it.
    """
    failure = state.result(raise_on_failure=False)
    return not isinstance(failure, (*PERMANENT, *RETRIED_BELOW))
