"""File locks: `timeout=0` tries once, a timeout polls until it runs out, `None` waits in the
kernel; a lock held elsewhere (another open file, as another process holds it) is waited for."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from memory.errors import InvalidInput, StorageError
from memory.store import locks
from memory.store.lance import LanceStore


class FakeTime:
    """A clock that only the recorded polls move, so no test waits."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


@contextmanager
def _held_elsewhere(uri: str, bank_id: str) -> Iterator[None]:
    """Hold the bank lock through a separate open file (flock treats it as another holder)."""
    with locks.bank_lock(uri, bank_id, timeout=0):
        pass  # makes the lock file
    fd = os.open(Path(uri) / "_locks" / f"{bank_id}.bank.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(fd)


def test_a_free_lock_is_taken_at_once_without_polling(tmp_path: Path) -> None:
    fake = FakeTime()
    poll = replace(locks.POLL, sleep=fake.sleep, clock=fake.clock)
    for timeout in (0, 5, None):
        with locks.bank_lock(str(tmp_path), "b", timeout=timeout, poll=poll) as held:
            assert held
    assert fake.waits == []


def test_timeout_zero_tries_once(tmp_path: Path) -> None:
    fake = FakeTime()
    poll = replace(locks.POLL, sleep=fake.sleep, clock=fake.clock)
    with (
        _held_elsewhere(str(tmp_path), "b"),
        locks.bank_lock(str(tmp_path), "b", timeout=0, poll=poll) as held,
    ):
        assert not held
    assert fake.waits == []


def test_a_timeout_polls_until_it_runs_out(tmp_path: Path) -> None:
    fake = FakeTime()
    poll = replace(locks.POLL, sleep=fake.sleep, clock=fake.clock)
    with (
        _held_elsewhere(str(tmp_path), "b"),
        locks.bank_lock(str(tmp_path), "b", timeout=0.5, poll=poll) as held,
    ):
        assert not held
    assert fake.now >= 0.5
    assert set(fake.waits) == {locks.POLL_SECONDS}  # a steady poll, no growing backoff
    assert fake.now < 0.5 + 2 * locks.POLL_SECONDS


def test_a_lock_freed_while_polling_is_taken(tmp_path: Path) -> None:
    uri = str(tmp_path)
    with locks.partition_lock(uri, "b", "k", timeout=0):
        pass
    stripe = locks._stripe("b", "k")
    fd = os.open(Path(uri) / "_locks" / f"{stripe}.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    fake = FakeTime()

    def sleep(seconds: float) -> None:  # the holder lets go during the second poll
        fake.sleep(seconds)
        if len(fake.waits) == 2:
            os.close(fd)

    poll = replace(locks.POLL, sleep=sleep, clock=fake.clock)
    with locks.partition_lock(uri, "b", "k", timeout=60, poll=poll) as held:
        assert held
    assert len(fake.waits) == 2


def test_none_waits_for_the_holder(tmp_path: Path) -> None:
    uri = str(tmp_path)
    taken = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with _held_elsewhere(uri, "b"):
            taken.set()
            release.wait()

    thread = threading.Thread(target=holder)
    thread.start()
    taken.wait()
    with locks.bank_lock(uri, "b", timeout=0) as held:
        assert not held  # still held by the other thread's open file
    release.set()
    with locks.bank_lock(uri, "b", timeout=None) as held:  # blocks in the kernel until freed
        assert held
    thread.join()


# which lock serves which storage ----------------------------------------------------------


def test_only_object_storage_with_a_lease_service_spans_machines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMBANK_LEASES", raising=False)
    assert not locks.spans_machines(str(tmp_path))
    assert not locks.spans_machines("s3://bucket/data")
    monkeypatch.setenv("MEMBANK_LEASES", "prefect")
    monkeypatch.setenv("MEMBANK_LEASE_URL", "http://127.0.0.1:1/api")
    assert locks.spans_machines("s3://bucket/data")
    assert not locks.spans_machines(str(tmp_path))  # a folder keeps its file locks
    with locks.partition_lock(str(tmp_path), "b", "k", timeout=0) as held:
        assert held  # taken without asking the (unreachable) lease service


def test_a_lease_setting_that_names_no_service_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMBANK_LEASES", "zookeeper")
    with pytest.raises(InvalidInput, match=r"MEMBANK_LEASES=.zookeeper.*prefect"):
        locks.spans_machines("s3://bucket/data")
    monkeypatch.setenv("MEMBANK_LEASES", "prefect")
    monkeypatch.delenv("MEMBANK_LEASE_URL", raising=False)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with pytest.raises(InvalidInput, match="MEMBANK_LEASE_URL or PREFECT_API_URL"):
        locks.spans_machines("s3://bucket/data")


def test_an_unreachable_lease_service_fails_the_lock_with_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMBANK_LEASES", "prefect")
    monkeypatch.setenv("MEMBANK_LEASE_URL", "http://127.0.0.1:1/api")
    monkeypatch.setenv("MEMBANK_LEASE_WAIT_SECONDS", "0")  # asked once, not 30 s
    with (
        pytest.raises(StorageError, match=r"lease service at http://127.0.0.1:1/api cannot"),
        locks.partition_lock("s3://bucket/data", "b", "k", timeout=None),
    ):
        pytest.fail("the block ran without its lease")


def test_only_a_local_folders_partition_lock_keeps_every_other_process_out(
    tmp_path: Path,
) -> None:
    assert LanceStore(str(tmp_path)).partitions_exclusive
    assert LanceStore(f"file://{tmp_path}").partitions_exclusive
    assert not LanceStore("s3://bucket/data").partitions_exclusive
