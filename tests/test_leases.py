"""Locks on object storage hold across processes through leases from a real Prefect server
(`MEMBANK_LEASES=prefect`): a lock another process holds is refused, a prune waits for writes
in flight, and when a holder is killed (`kill -9`) its lease lapses and another process
proceeds. On moto's S3 server: a compaction killed mid-summary and one killed between its
delete and its prune are finished by another process with no entry lost, none summarised
twice, and no deleted text left in any object; a prune there deletes the copy a lost
rewrite race left (files no version references), with no setting but the lease service.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import lance
import pytest
from compaction_support import assert_exactly_once, assert_no_loss, make_bank, write_turns
from lance.optimize import Compaction
from lease_support import compact_and_die, hold_lock_forever, prefect_server
from s3_support import S3, PlainCompleter, moto_s3

from memory import banks, entries, purge
from memory.compaction.apply import compact_partition
from memory.context import Context
from memory.leases.prefect import PrefectLeases
from memory.models import BankCreate, EntryIn
from memory.store import filters, locks
from memory.store.lance import LanceStore, entries_table_name
from memory.store.retry import race_of

pytestmark = [pytest.mark.server]

READY_SECONDS = 600.0
"""A bound on a spawned child's start (imports on a loaded machine), not a wait."""


@pytest.fixture(scope="module")
def lease_api() -> Iterator[str]:
    with prefect_server() as url:
        yield url


@pytest.fixture
def leased(lease_api: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Leases from the test server for this process and the processes it spawns."""
    monkeypatch.setenv("MEMBANK_LEASES", "prefect")
    monkeypatch.setenv("MEMBANK_LEASE_URL", lease_api)
    return lease_api


def _spawn(target: object, *args: object) -> multiprocessing.process.BaseProcess:
    child = multiprocessing.get_context("spawn").Process(target=target, args=args)
    child.start()
    return child


def _wait_ready(child: multiprocessing.process.BaseProcess, ready: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while not ready.exists():
        assert child.is_alive(), "the child died before taking its lock"
        assert time.monotonic() < deadline, "the child never took its lock"
        time.sleep(0.05)


def _kill(child: multiprocessing.process.BaseProcess) -> None:
    child.kill()  # SIGKILL: no finally block, no release; only the lease lapsing frees it
    child.join()


def test_leases_exclude_and_a_prune_waits_for_writes(leased: str) -> None:
    uri = "s3://nowhere/data"  # locks never touch the storage itself
    with locks.partition_lock(uri, "b", "k", timeout=0) as first:
        assert first
        with locks.partition_lock(uri, "b", "k", timeout=0) as second:
            assert not second
        with locks.partition_lock(uri, "b", "other-key-0", timeout=0) as elsewhere:
            assert elsewhere
    service = PrefectLeases(leased)
    versions = locks._lease_name(uri, "t.versions")
    with (
        locks.writing(uri, "t"),
        locks.reading(uri, "t"),
        service.hold(
            versions, slots=locks.VERSION_SLOTS, limit=locks.VERSION_SLOTS, timeout=0
        ) as prune,
    ):
        assert not prune  # a prune (every slot) waits while a write is in flight
    with service.hold(
        versions, slots=locks.VERSION_SLOTS, limit=locks.VERSION_SLOTS, timeout=0
    ) as prune:
        assert prune


@pytest.mark.process
@pytest.mark.slow
def test_a_killed_holders_lease_lapses_and_another_process_proceeds(
    leased: str, tmp_path: Path
) -> None:
    uri = "s3://nowhere/data"
    ready = tmp_path / "ready"
    child = _spawn(hold_lock_forever, uri, "b", "k", str(ready))
    try:
        _wait_ready(child, ready)
        with locks.partition_lock(uri, "b", "k", timeout=0) as held:
            assert not held  # another process holds it: a per-process lock would not see that
    finally:
        _kill(child)
    with locks.partition_lock(uri, "b", "k", timeout=None) as held:
        assert held  # the lease lapsed (60 s) and the server freed the slot


# on object storage --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3() -> Iterator[S3]:
    with moto_s3() as emulated, pytest.MonkeyPatch.context() as patch:
        for name, value in emulated.env.items():
            patch.setenv(name, value)
        yield emulated


@pytest.fixture
def s3_ctx(ctx: Context, s3: S3, leased: str) -> Context:
    """The shared test context on a fresh prefix of the bucket, with leases configured."""
    ctx.store = LanceStore(s3.uri(s3.fresh_prefix()))
    ctx.completer = PlainCompleter
    return ctx


def _prefix(s3: S3, ctx: Context) -> str:
    return ctx.store.uri.removeprefix(f"s3://{s3.bucket}/")


@pytest.mark.s3
def test_a_prune_with_leases_deletes_a_lost_rewrites_copy(s3: S3, s3_ctx: Context) -> None:
    """Another process's rewrite copied a row, then lost its commit to a delete of that row:
    with a lease service no write can be in flight during a prune, so the store's default
    prune deletes the unreferenced copy (no 7-day wait)."""
    ctx = s3_ctx
    bank = banks.create(ctx, BankCreate(name="chat", type="conversation"))
    said = [EntryIn(key="k", speaker="a", content=t) for t in ("first", "passport zq5531")]
    first, secret = entries.write(ctx, bank, said)
    ctx.store.delete_where(bank.id, filters.equals("entry_id", first.id), prune=False)
    dataset = lance.dataset(f"{ctx.store.uri}/{entries_table_name(bank.id)}.lance")
    options = {"materialize_deletions": True, "materialize_deletions_threshold": 0.0}
    rewrites = [task.execute(dataset) for task in Compaction.plan(dataset, options).tasks]
    ctx.store.delete_where(bank.id, filters.equals("entry_id", secret.id), prune=False)
    with pytest.raises(OSError) as lost:
        Compaction.commit(dataset, rewrites, options)
    assert race_of(lost.value) == "conflict"

    purge.prune(ctx, bank)

    assert entries.read(ctx, bank) == []
    assert s3.keys_containing(_prefix(s3, ctx), b"zq5531") == []


@pytest.mark.s3
@pytest.mark.process
@pytest.mark.slow
def test_compactions_killed_mid_summary_and_mid_prune_are_finished_by_another_process(
    s3: S3, s3_ctx: Context, tmp_path: Path
) -> None:
    ctx = s3_ctx
    steps = {"summary_stored": make_bank(ctx, "a", max_turns=6)}
    steps["deleted"] = make_bank(ctx, "b", max_turns=6)
    written = {
        step: write_turns(ctx, bank, "k", 9, start=100 * i)
        for i, (step, bank) in enumerate(steps.items())
    }
    children = []
    try:
        for step, bank in steps.items():
            ready = tmp_path / f"ready-{step}"
            args = (ctx.store.uri, ctx.account, bank.id, "k", step, str(ready))
            children.append((_spawn(compact_and_die, *args), ready))
        for child, ready in children:
            _wait_ready(child, ready)
        for bank in steps.values():
            busy = compact_partition(ctx, bank, "k", wait=0)
            assert busy.status == "busy"  # the killed child's lease still holds it
    finally:
        for child, _ in children:
            _kill(child)

    gone: list[bytes] = []
    for step, bank in steps.items():
        compact_partition(ctx, bank, "k", wait=None)  # waits for the lease to lapse
        after = entries.load(ctx, bank, "k")
        original = [e.id for e in written[step]]
        assert_no_loss(after, original)
        assert_exactly_once(after, original)
        assert [e.kind for e in after].count("summary") == 1, step
        present = {e.id for e in after}
        gone += [e.content.encode() for e in written[step] if e.id not in present]
    assert gone
    objects = s3.contents(_prefix(s3, ctx))
    left = {text: [k for k, data in objects.items() if text in data] for text in gone}
    assert not any(left.values()), left


def test_a_limit_lost_with_the_servers_database_is_made_again(leased: str) -> None:
    uri = "s3://nowhere/reset"
    with locks.partition_lock(uri, "b", "k", timeout=0) as held:
        assert held  # the limit exists now, and this process remembers making it
    name = locks._lease_name(uri, locks._stripe("b", "k"))
    assert httpx.delete(f"{leased}/v2/concurrency_limits/{name}").status_code == 204
    with locks.partition_lock(uri, "b", "k", timeout=0) as first:
        assert first
        with locks.partition_lock(uri, "b", "k", timeout=0) as second:
            assert not second  # a lease on a missing limit would have let it in


def test_a_held_lease_is_renewed_by_the_processs_renewing_thread(leased: str) -> None:
    service = PrefectLeases(leased, renew_check_seconds=0.05)
    with service.hold("membank-test-renewal", slots=1, limit=1, timeout=0) as held:
        assert held
        (lease,) = service._held
        service._held[lease] = time.monotonic() - service.lease_seconds  # renewal due now
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() - service._held[lease] > service.lease_seconds / 3:
            assert time.monotonic() < deadline, "the lease was never renewed"
            time.sleep(0.05)
        assert service._renew(lease)  # the server still knows it
    assert service._held == {}
    assert not service._renew(lease)  # released: gone from the server
