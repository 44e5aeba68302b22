"""Waiting for long work (jobs, exports): how often to poll, and when to give up."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from memory.api.schemas import ResourceExport
from memory.client.errors import JobFailed

FIRST_POLL = 0.1
LONGEST_POLL = 1.0


@dataclass(frozen=True)
class Poll:
    """Poll delays: 0.1 s, growing by half each time up to 1 s, until `timeout` has passed
    on `clock` (the client's retry policy's clock)."""

    clock: Callable[[], float]
    first: float = FIRST_POLL
    longest: float = LONGEST_POLL

    def ticks(self, timeout: float) -> Iterator[float | None]:
        """Yield the wait before each next poll; None once the time is up."""
        deadline = self.clock() + timeout
        delay = self.first
        while True:
            left = deadline - self.clock()
            if left <= 0:
                yield None
                return
            yield min(delay, left)
            delay = min(delay * 1.5, self.longest)


def export_failure(export: ResourceExport) -> JobFailed:
    """Return the error of a failed export."""
    code = export.error.code if export.error else "failed"
    why = export.error.message if export.error else "no reason given"
    return JobFailed(f"export {export.id} failed: {why}", job=export, code=code)
