"""The one retry policy: attempts, growing waits with jitter, a bound on the time, resets."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memory.retry import RetryPolicy


class FakeTime:
    """A clock that only a recorded sleep moves, so no test waits."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def _failing(times: int, error: BaseException) -> tuple[list[int], Callable[[], str]]:
    calls: list[int] = []

    def action() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise error
        return "done"

    return calls, action


def test_a_step_that_keeps_failing_is_run_attempts_times_and_its_error_goes_up() -> None:
    fake = FakeTime()
    policy = RetryPolicy(attempts=4, backoff_seconds=1, max_wait_seconds=3, sleep=fake.sleep)
    calls, action = _failing(10, OSError("busy"))

    with pytest.raises(OSError, match="busy"):  # the error itself, not tenacity's RetryError
        policy.run(action, when=lambda exc: True)

    assert len(calls) == 4
    assert fake.waits == [1, 2, 3]  # doubled, capped at max_wait_seconds


def test_a_step_that_passes_on_a_rerun_returns_its_value_after_a_reset() -> None:
    fake = FakeTime()
    events: list[str] = []
    policy = RetryPolicy(attempts=3, backoff_seconds=0.5, sleep=fake.sleep)
    calls, action = _failing(1, OSError("busy"))

    def reset() -> None:
        events.append(f"reset after {len(fake.waits)} waits")

    assert policy.run(action, when=lambda exc: True, reset=reset) == "done"
    assert len(calls) == 2
    assert events == ["reset after 1 waits"]  # once, after the wait, before the rerun


def test_an_error_the_policy_does_not_accept_goes_up_at_once() -> None:
    fake = FakeTime()
    policy = RetryPolicy(attempts=5, sleep=fake.sleep)
    calls, action = _failing(1, KeyError("bug"))

    with pytest.raises(KeyError):
        policy.run(action, when=lambda exc: isinstance(exc, OSError))

    assert (len(calls), fake.waits) == (1, [])


def test_jitter_adds_at_most_its_bound_to_each_wait() -> None:
    fake = FakeTime()
    policy = RetryPolicy(
        attempts=30, backoff_seconds=1, max_wait_seconds=1.5, jitter_seconds=0.25, sleep=fake.sleep
    )
    _, action = _failing(100, OSError("busy"))

    with pytest.raises(OSError):
        policy.run(action, when=lambda exc: True)

    assert all(1 <= wait <= 1.5 for wait in fake.waits)
    assert len(set(fake.waits)) > 1  # not all the same: processes do not retry in step


def test_the_time_bound_stops_reruns_once_it_has_passed() -> None:
    fake = FakeTime()
    policy = RetryPolicy(
        attempts=None,
        backoff_seconds=0.05,
        max_wait_seconds=0.05,
        max_total_seconds=1.0,
        sleep=fake.sleep,
        clock=fake.clock,
    )
    calls, action = _failing(1000, OSError("busy"))

    with pytest.raises(OSError):
        policy.run(action, when=lambda exc: True)

    assert fake.now == pytest.approx(1.0)
    assert len(calls) == 21  # at 0, 0.05, ..., 1.0


def test_a_policy_must_end() -> None:
    with pytest.raises(ValueError, match="attempts"):
        RetryPolicy(attempts=0)
    with pytest.raises(ValueError, match="waits"):
        RetryPolicy(backoff_seconds=-1)
    with pytest.raises(ValueError, match="max_total_seconds"):
        RetryPolicy(attempts=None)
