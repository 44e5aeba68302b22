"""The job pool is fair between accounts: one account's burst runs at most `max_running`
jobs at once, so another account's job starts while the burst waits; an account over
`max_pending` is refused with the seconds after which to retry (REST: `Retry-After`)."""

from __future__ import annotations

import threading

import pytest

from memory.ops.jobs import JobLimits, TooManyJobs, open_jobs


def test_one_accounts_burst_leaves_a_worker_for_another_account() -> None:
    release = threading.Event()
    pool = open_jobs(JobLimits(workers=2, max_pending=8, keep=50))  # 1 running per account
    try:
        burst = [pool.submit("acme", "export", lambda _: release.wait(30)) for _ in range(4)]
        other = pool.submit("beta", "export", lambda _: "done")
        pool.wait(other, 30)
        assert pool.get("beta", other.id).result == "done"
        assert [pool.get("acme", j.id).status for j in burst] == [
            "running",
            "queued",
            "queued",
            "queued",
        ]
        release.set()
        for job in burst:
            pool.wait(job, 30)
        assert {pool.get("acme", j.id).status for j in burst} == {"succeeded"}
    finally:
        release.set()
        pool.shutdown()


def test_queued_jobs_start_account_by_account_in_turn() -> None:
    release = threading.Event()
    started: list[str] = []
    pool = open_jobs(JobLimits(workers=1, max_pending=8, keep=50))

    def work(name: str) -> object:
        def run(_: object) -> None:
            started.append(name)
            release.wait(30)

        return run

    try:
        jobs = [pool.submit("acme", "export", work(f"acme-{i}")) for i in range(3)]
        jobs += [pool.submit("beta", "export", work(f"beta-{i}")) for i in range(2)]
        release.set()
        for job in jobs:
            pool.wait(job, 30)
        assert started == ["acme-0", "beta-0", "acme-1", "beta-1", "acme-2"]
    finally:
        release.set()
        pool.shutdown()


def test_a_full_account_is_told_when_to_retry() -> None:
    release = threading.Event()
    pool = open_jobs(JobLimits(workers=1, max_pending=2, keep=50))
    try:
        for _ in range(2):
            pool.submit("acme", "export", lambda _: release.wait(30))
        with pytest.raises(TooManyJobs, match="wait for one") as refused:
            pool.submit("acme", "export", lambda _: None)
        assert refused.value.retry_after is None  # no job has finished yet: the server's own
        assert pool.submit("beta", "export", lambda _: None).account == "beta"
    finally:
        release.set()
        pool.shutdown()
