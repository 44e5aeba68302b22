"""The one retry policy (on tenacity), and which layer retries what.

Each kind of failure is retried in one layer only, so attempts never multiply:
- **transient model errors** (timeouts, connection errors, rate limits, 5xx): the litellm
  adapter (`memory.providers.llm`), `retries` extra attempts (`Settings.llm_retries`).
  litellm's own `num_retries` is 0 there, and nothing above the adapter retries a
  `ProviderError` again (the Prefect tasks in `flows/` do not). Remote embeddings are the
  exception: litellm retries them itself (it turns `max_retries=0` into its default of 2),
  so `embed_texts` adds no retries of its own.
- **lost commit races with another process** (a conflicting commit, a version pruned
  under a read): the store (`memory.store.retry`), `StoreTuning.retry`, from the latest
  version. Lance rebases a plain delete, update or merge-insert over concurrent commits
  itself (its `conflict_retries`); when those run out the store does not retry again.
- **a file lock another process holds**: `memory.store.locks` polls through the same
  policy until its timeout.
Everything else (wrong input, a missing bank, a full disk, a refused request) fails at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception, wait_exponential_jitter

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often a failed step is run again and how long to wait in between.

    The wait before rerun n (1, 2, ...) is `backoff_seconds * 2**(n-1)` plus a random
    jitter up to `jitter_seconds`, at most `max_wait_seconds`; so with `attempts` the total
    wait is bounded by `(attempts - 1) * max_wait_seconds`, and `max_total_seconds` bounds
    the whole run by the clock.

    Attributes:
        attempts: runs in all (1 = no retry); None = no limit but `max_total_seconds`.
        backoff_seconds: wait before the first rerun; doubled before each further one.
        max_wait_seconds: the longest single wait.
        jitter_seconds: up to this much is added to each wait at random, so processes that
            lost the same race do not retry in step.
        max_total_seconds: no rerun starts once this long has passed since the first run
            began (on `clock`); None = no bound but `attempts`.
        sleep: how a wait is taken (tests pass one that only records it).
        clock: seconds on a monotonic clock (tests pass one that `sleep` advances).
    """

    attempts: int | None = 3
    backoff_seconds: float = 0.5
    max_wait_seconds: float = 8.0
    jitter_seconds: float = 0.0
    max_total_seconds: float | None = None
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)

    def __post_init__(self) -> None:
        waits = (self.backoff_seconds, self.max_wait_seconds, self.jitter_seconds)
        if (self.attempts is not None and self.attempts < 1) or min(waits) < 0:
            raise ValueError("RetryPolicy needs attempts >= 1 and waits >= 0")
        if self.attempts is None and self.max_total_seconds is None:
            raise ValueError("RetryPolicy needs attempts or max_total_seconds to end")

    def run(
        self,
        action: Callable[[], T],
        *,
        when: Callable[[BaseException], bool],
        reset: Callable[[], None] | None = None,
    ) -> T:
        """Return `action()`, run again (after `reset()`) while it fails with an error `when`
        accepts.

        Raises:
            BaseException: an error `when` rejects at once, or the last one once the
                attempts or the time are used up (never tenacity's RetryError).
        """
        started = self.clock()

        def stop(state: RetryCallState) -> bool:
            if self.attempts is not None and state.attempt_number >= self.attempts:
                return True
            total = self.max_total_seconds
            return total is not None and self.clock() - started >= total

        def before(state: RetryCallState) -> None:
            if reset is not None and state.attempt_number > 1:
                reset()

        retrying = Retrying(
            stop=stop,
            wait=wait_exponential_jitter(
                multiplier=self.backoff_seconds,
                max=self.max_wait_seconds,
                jitter=self.jitter_seconds,
            ),
            retry=retry_if_exception(when),
            before=before,
            sleep=self.sleep,
            reraise=True,
        )
        return retrying(action)
