"""membank on S3-compatible object storage: moto's S3 server on 127.0.0.1, `s3://` URIs.

Everything the local-folder tests prove about storage holds on object storage too: banks,
writes, searches with escaped filters, loads, exports, stats, the `membank` command, and
final deletion: after forget, retention, compaction or a bank delete no object under the
store's prefix holds the deleted text (every object's bytes are read back with boto3). When
a prune's rewrite loses a race with another process's commit, its copy is left to LanceDB's
7-day cleanup unless the store may delete unreferenced files (`StoreTuning.delete_unverified`,
off on object storage: no lock there keeps other processes' writes out meanwhile).
Writers and compactions in two processes at once lose nothing and summarise nothing twice.
Credentials and the endpoint come only from the AWS_* environment variables.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from multiprocessing.pool import Pool
from pathlib import Path

import lance
import pyarrow.parquet as pq
import pytest
from compaction_support import (
    MARKER,
    assert_exactly_once,
    assert_no_loss,
    make_bank,
    spawn_pool,
    write_turns,
)
from lance.optimize import Compaction
from s3_support import S3, PlainCompleter, compact_at_gate, moto_s3, warm_up
from spawned import CACHE as BYTECODE
from spawned import write_markers
from test_cli import MEMBANK, Run

from memory import banks, entries, purge, retention, search, stats
from memory.clock import FixedClock
from memory.compaction.apply import compact_partition
from memory.context import Context
from memory.errors import NotFound
from memory.models import Bank, BankCreate, EntryIn, SearchQuery
from memory.ops import sweeps
from memory.store import filters
from memory.store.lance import LanceStore, entries_table_name
from memory.store.retry import race_of
from memory.store.segments import StoreTuning
from memory.testing import ScriptedCompleter
from memory.transfer import export

PASSPORT = "xq7731passport"
"""A distinctive token (a fake passport number) that must vanish from every object; lower
case, as the full-text index stores it."""
INJECTION = "x' OR '1'='1"


@pytest.fixture(scope="module")
def s3() -> Iterator[S3]:
    """moto's S3 server for this module, its AWS_* variables set for LanceDB (and children)."""
    with moto_s3() as emulated, pytest.MonkeyPatch.context() as patch:
        for name, value in emulated.env.items():
            patch.setenv(name, value)
        yield emulated


@pytest.fixture
def prefix(s3: S3) -> str:
    """A fresh prefix in the bucket: each test gets its own empty store."""
    return s3.fresh_prefix()


@pytest.fixture
def ctx(ctx: Context, s3: S3, prefix: str) -> Context:
    """The shared test context (hashing embedder, fixed clock) on `s3://bucket/<prefix>`."""
    ctx.store = LanceStore(s3.uri(prefix))
    return ctx


@pytest.fixture(scope="module", autouse=True)
def pool(s3: S3) -> Iterator[Pool]:
    """Two spawned processes, started with the S3 environment in place; they import their
    libraries while the first tests run (a process start costs seconds)."""
    with spawn_pool(2) as workers:
        workers.map_async(warm_up, range(2), chunksize=1)
        yield workers


def _said(key: str, text: str, **fields: object) -> EntryIn:
    return EntryIn.model_validate({"key": key, "speaker": "alice", "content": text, **fields})


def _assert_gone_everywhere(s3: S3, prefix: str, ctx: Context, bank: Bank, needle: str) -> None:
    """The text is in no read and in no object under the store's prefix; one version left."""
    assert not any(needle in e.content for e in entries.read(ctx, bank))
    assert search.search(ctx, bank, SearchQuery(text=needle, method="fts")) == []
    assert s3.keys_containing(prefix, needle.encode()) == []
    assert ctx.store.version_count(bank.id) == 1


# banks, writes, reads ----------------------------------------------------------------------


def test_banks_create_list_get_delete(s3: S3, prefix: str, ctx: Context) -> None:
    chat = banks.create(ctx, BankCreate(name="chat", type="conversation", description="zq-chat"))
    notes = banks.create(ctx, BankCreate(name="notes", type="general", description="zq-notes"))
    assert [b.name for b in banks.list_banks(ctx)] == ["chat", "notes"]
    assert [b.name for b in banks.list_banks(ctx, "general")] == ["notes"]
    assert banks.get(ctx, "chat").id == chat.id
    assert banks.get(ctx, notes.id).description == "zq-notes"
    entries.write(ctx, notes, [EntryIn(key="k", content=f"card {PASSPORT}")])
    table = entries_table_name(notes.id)
    assert any(key.startswith(f"{prefix}/{table}.lance/") for key in s3.keys(prefix))

    assert banks.delete(ctx, "notes").id == notes.id

    with pytest.raises(NotFound):
        banks.get(ctx, notes.id)
    assert [b.name for b in banks.list_banks(ctx)] == ["chat"]
    assert not any(table in key for key in s3.keys(prefix))
    assert s3.keys_containing(prefix, b"zq-notes") == []  # registry versions pruned
    assert s3.keys_containing(prefix, PASSPORT.encode()) == []
    # another handle (another process) sees the same registry
    other = Context(store=LanceStore(ctx.store.uri), account="acme", embedder=ctx.embedder)
    assert [b.id for b in banks.list_banks(other)] == [chat.id]


def test_write_search_load_with_filters(ctx: Context) -> None:
    bank = banks.create(ctx, BankCreate(name="chat", type="conversation"))
    start = ctx.clock.now()
    (first,) = entries.write(ctx, bank, [_said("k", "the red fox jumps", tags=["animal"])])
    batch = entries.write(
        ctx,
        bank,
        [
            _said("k", "the lazy dog sleeps", created_at=start + timedelta(minutes=1)),
            _said(INJECTION, "the red fox in a quoted key", created_at=start),
            EntryIn(
                key="k",
                speaker="bob",
                content="bob likes red apples",
                tags=["food"],
                created_at=start + timedelta(minutes=2),
            ),
        ],
    )
    assert len(batch) == 3

    thread = entries.load(ctx, bank, "k")
    assert [e.id for e in thread] == [first.id, batch[0].id, batch[2].id]
    assert [e.content for e in entries.load(ctx, bank, INJECTION)] == [batch[1].content]
    assert entries.load(ctx, bank, "nothing") == []

    def found(**query: object) -> list[str]:
        # min_score 0: this checks the filters, not the relevance threshold
        asked = {"text": "red fox", "min_score": 0, **query}
        hits = search.search(ctx, bank, SearchQuery.model_validate(asked))
        return [h.entry.id for h in hits]

    for method in ("hybrid", "vector", "fts"):
        assert found(method=method)[0] in {first.id, batch[1].id}, method
    assert found(key=INJECTION) == [batch[1].id]
    assert set(found(key="k")) == {first.id, batch[0].id, batch[2].id}
    assert found(tags=["animal"]) == [first.id]
    assert found(speaker="bob") == [batch[2].id]
    assert found(speaker=INJECTION) == []
    assert found(tags=[INJECTION]) == []
    assert set(found(since=start + timedelta(seconds=30))) == {batch[0].id, batch[2].id}
    assert found(until=start + timedelta(seconds=30), key="k") == [first.id]


# final deletion ----------------------------------------------------------------------------


@pytest.mark.parametrize("indexed", [False, True], ids=["unindexed", "indexed"])
def test_forget_leaves_no_object_with_the_text(
    s3: S3, prefix: str, ctx: Context, indexed: bool
) -> None:
    if indexed:  # every write folds its rows into the key and full-text indices
        ctx.store = LanceStore(ctx.store.uri, tuning=StoreTuning(reindex_every=1))
    bank = banks.create(ctx, BankCreate(name="chat", type="conversation"))
    keep = entries.write(ctx, bank, [_said("k", "first about the weather")])[0]
    gone = entries.write(ctx, bank, [_said("k", f"my passport number is {PASSPORT}")])[0]
    later = entries.write(ctx, bank, [_said("k", "last about the weather")])[0]
    assert s3.keys_containing(prefix, PASSPORT.encode())  # the scan sees it

    entries.forget(ctx, bank, gone.id)

    assert [e.id for e in entries.load(ctx, bank, "k")] == [keep.id, later.id]
    _assert_gone_everywhere(s3, prefix, ctx, bank, PASSPORT)
    with pytest.raises(NotFound):
        entries.forget(ctx, bank, gone.id)
    entries.write(ctx, bank, [_said("k", "after the forget")])  # still works after pruning
    assert entries.load(ctx, bank, "k")[-1].content == "after the forget"


def test_retention_leaves_no_object_with_the_text(
    s3: S3, prefix: str, ctx: Context, clock: FixedClock
) -> None:
    bank = banks.create(ctx, BankCreate(name="chat", type="conversation", retention_days=30))
    old = clock.now() - timedelta(days=45)
    entries.write(ctx, bank, [_said("k", f"old passport {PASSPORT}", created_at=old)])
    fresh = entries.write(ctx, bank, [_said("k", "recent and kept")])[0]
    assert s3.keys_containing(prefix, PASSPORT.encode())

    result = retention.apply_retention(ctx, bank)

    assert (result.status, result.deleted) == ("deleted", 1)
    assert [e.id for e in entries.load(ctx, bank, "k")] == [fresh.id]
    _assert_gone_everywhere(s3, prefix, ctx, bank, PASSPORT)


def test_compaction_without_prompt_leaves_no_object_with_the_text(
    s3: S3, prefix: str, ctx: Context
) -> None:
    bank = make_bank(ctx, compaction_prompt=None, max_turns=4)
    entries.write(ctx, bank, [_said("k", f"oldest: passport {PASSPORT}")])
    write_turns(ctx, bank, "k", 4)
    assert s3.keys_containing(prefix, PASSPORT.encode())

    result = compact_partition(ctx, bank, "k")

    assert result.status == "dropped" and result.covered >= 1
    assert len(entries.load(ctx, bank, "k")) <= 2
    _assert_gone_everywhere(s3, prefix, ctx, bank, PASSPORT)


def test_compaction_with_summary_leaves_no_object_with_the_text(
    s3: S3, prefix: str, ctx: Context
) -> None:
    scripted = ScriptedCompleter(model="scripted/test").enqueue("Alice travels in May.")
    ctx.completer = lambda: scripted
    bank = make_bank(ctx, max_turns=4)
    entries.write(ctx, bank, [_said("k", f"oldest: passport {PASSPORT}")])
    write_turns(ctx, bank, "k", 4)
    before = [e.id for e in entries.load(ctx, bank, "k")]

    result = compact_partition(ctx, bank, "k")

    assert result.status == "compacted" and len(scripted.calls) == 1
    stored = entries.load(ctx, bank, "k")
    assert_exactly_once(stored, before)
    (summary,) = [e for e in stored if e.kind == "summary"]
    assert summary.content == "Alice travels in May." and before[0] in summary.summary_of
    _assert_gone_everywhere(s3, prefix, ctx, bank, PASSPORT)
    assert banks.get(ctx, bank.id).summary_count == 1


def test_a_compaction_that_lost_the_race_drops_its_summary_and_deletes_nothing(
    ctx: Context,
) -> None:
    # on object storage without a lease service another machine can hold the same partition
    assert not ctx.store.partitions_exclusive
    scripted = ScriptedCompleter(model="scripted/test").enqueue("our summary")
    ctx.completer = lambda: scripted
    bank = make_bank(ctx, max_turns=4)
    write_turns(ctx, bank, "k", 6)
    before = entries.load(ctx, bank, "k")
    covered = [e.id for e in before[:5]]

    def rival(at: str) -> None:
        if at == "summarized":  # another machine stores its summary of the same entries
            item = EntryIn(key="k", speaker="compaction-summary", content="rival summary")
            entries.write(ctx, bank, [item], kind="summary", summary_of=[covered])

    result = compact_partition(ctx, bank, "k", checkpoint=rival)
    assert result.status == "conflict"
    stored = entries.load(ctx, bank, "k")
    assert [e.content for e in stored if e.kind == "summary"] == ["rival summary"]
    assert_no_loss(stored, [e.id for e in before])
    compact_partition(ctx, bank, "k")  # finishes the rival's journal
    assert_exactly_once(entries.load(ctx, bank, "k"), [e.id for e in before])


def test_reset_source_removes_the_bank_objects(s3: S3, prefix: str, ctx: Context) -> None:
    bank = banks.create(ctx, BankCreate(name="chat", type="conversation"))
    entries.write(ctx, bank, [_said("k", f"passport {PASSPORT}")])
    table = f"{prefix}/{entries_table_name(bank.id)}.lance/"

    banks.reset_source(ctx, bank.id)

    assert [key for key in s3.keys(prefix) if key.startswith(table)] == []
    assert s3.keys_containing(prefix, PASSPORT.encode()) == []
    assert entries.load(ctx, bank, "k") == []
    entries.write(ctx, bank, [_said("k", "provisioned again")])
    assert [e.content for e in entries.load(ctx, bank, "k")] == ["provisioned again"]


def test_a_prune_after_a_lost_rewrite_race_leaves_no_copy(
    s3: S3, prefix: str, ctx: Context
) -> None:
    """Another process's rewrite copied a row, then lost its commit to a delete of that row:
    Lance leaves the copy for its 7-day cleanup. On object storage the store removes such
    files only with `delete_unverified` (no cross-process lock there keeps writes out), as a
    deployment with one writing process per bank sets it."""
    bank = banks.create(ctx, BankCreate(name="chat", type="conversation"))
    first, secret = entries.write(
        ctx, bank, [_said("k", "first to go"), _said("k", f"passport {PASSPORT}")]
    )
    ctx.store.delete_where(bank.id, filters.equals("entry_id", first.id), prune=False)
    dataset = lance.dataset(f"{ctx.store.uri}/{entries_table_name(bank.id)}.lance")
    options = {"materialize_deletions": True, "materialize_deletions_threshold": 0.0}
    rewrites = [task.execute(dataset) for task in Compaction.plan(dataset, options).tasks]
    ctx.store.delete_where(bank.id, filters.equals("entry_id", secret.id), prune=False)
    with pytest.raises(OSError) as lost:
        Compaction.commit(dataset, rewrites, options)
    assert race_of(lost.value) == "conflict"

    ctx.store = LanceStore(ctx.store.uri, tuning=StoreTuning(delete_unverified=True))
    purge.prune(ctx, bank)

    assert entries.read(ctx, bank) == []
    _assert_gone_everywhere(s3, prefix, ctx, bank, PASSPORT)


# export, stats -----------------------------------------------------------------------------


def test_export_and_stats_read_from_s3(ctx: Context, tmp_path: Path) -> None:
    bank = banks.create(ctx, BankCreate(name="chat", type="conversation"))
    written = entries.write(
        ctx,
        bank,
        [_said("a", "one", tags=["t"]), _said("a", "two"), _said(INJECTION, "three")],
    )
    ids = {e.id for e in written}

    as_json = export.export(ctx, bank, "json", tmp_path / "chat.json")
    document = json.loads((tmp_path / "chat.json").read_text())
    assert as_json.entries == 3 and {e["id"] for e in document["entries"]} == ids
    only = export.export(
        ctx, bank, "parquet", tmp_path / "k.parquet", export.ExportFilters(key=INJECTION)
    )
    assert only.entries == 1
    assert pq.read_table(tmp_path / "k.parquet").column("content").to_pylist() == ["three"]
    vectors = export.export(ctx, bank, "parquet", tmp_path / "v.parquet", with_vectors=True)
    assert vectors.entries == 3
    parts = export.export(ctx, bank, "parquet", tmp_path / "by-key", partition_by="key")
    assert parts.entries == 3 and parts.files == 2

    figures = stats.compute(ctx, bank)
    assert (figures.total_entries, figures.unique_keys, figures.unique_speakers) == (3, 2, 1)
    assert [(c.name, c.entries) for c in figures.top_keys] == [("a", 2), (INJECTION, 1)]


# the membank command -----------------------------------------------------------------------


def _membank(uri: str, *args: str) -> Run:
    """Run `membank ARGS` as a real process with MEMBANK_URI=uri (AWS_* from this env)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMBANK_")}
    env.update(MEMBANK_URI=uri, MEMBANK_ACCOUNT="local", MEMBANK_BLOCK_MODEL_REQUESTS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a shared bytecode cache: faster start-ups
    env["PYTHONPYCACHEPREFIX"] = str(BYTECODE)
    done = subprocess.run([*MEMBANK, *args], capture_output=True, env=env, timeout=300, check=False)
    return Run(tuple(args), done.returncode, done.stdout.decode(), done.stderr.decode())


def _side_by_side(uri: str, *calls: Sequence[str]) -> list[Run]:
    """Run independent membank processes at once (a process start costs seconds)."""
    with ThreadPoolExecutor(max_workers=len(calls)) as workers:
        return list(workers.map(lambda call: _membank(uri, *call), calls))


def test_cli_write_search_load_forget(s3: S3, prefix: str, ctx: Context) -> None:
    local = Context(store=ctx.store, account="local", clock=ctx.clock)  # MiniLM, as the CLI
    bank = banks.create(local, BankCreate(name="cli", type="conversation"))
    (plain,) = entries.write(local, bank, [_said(INJECTION, "the weather is fine")])
    uri = s3.uri(prefix)
    (written,) = _side_by_side(
        uri, ["write", "cli", "--key", "k", "--speaker", "bob", f"passport {PASSPORT}", "--json"]
    )
    secret = written.json()["id"]
    assert [e.id for e in entries.load(local, bank, "k")] == [secret]

    # the forget touches partition k only: the reads of the other partition are unaffected
    found, thread, forgotten = _side_by_side(
        uri,
        ["search", "cli", "weather", "--key", INJECTION, "--json"],
        ["load", "cli", "--key", INJECTION, "--json"],
        ["forget", "cli", secret, "--json"],
    )
    assert [h["entry"]["id"] for h in found.json()] == [plain.id]
    assert [e["id"] for e in thread.json()] == [plain.id]
    assert forgotten.json() == {"forgotten": secret}
    assert entries.load(local, bank, "k") == []
    assert s3.keys_containing(prefix, PASSPORT.encode()) == []


def test_verify_says_what_object_storage_without_leases_does_not_guarantee(
    s3: S3, prefix: str, ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    banks.create(ctx, BankCreate(name="chat", type="conversation"))
    checked = _membank(s3.uri(prefix), "verify", "--all")
    assert checked.code == 0, checked.err
    assert "without a lease service (MEMBANK_LEASES=prefect)" in checked.err
    assert "7-day cleanup" in checked.err
    monkeypatch.setenv("MEMBANK_LEASES", "prefect")
    monkeypatch.setenv("MEMBANK_LEASE_URL", "http://127.0.0.1:1/api")  # configured, not asked
    assert sweeps.lock_note(ctx) is None


# two processes at once ---------------------------------------------------------------------

PER_WRITER = 12


def test_two_processes_write_one_bank_and_lose_nothing(ctx: Context, pool: Pool) -> None:
    bank = make_bank(ctx, compaction_prompt=None)
    jobs = [(ctx.store.uri, ctx.account, bank.id, "k", w, PER_WRITER) for w in range(2)]
    assert pool.starmap(write_markers, jobs, chunksize=1) == [PER_WRITER, PER_WRITER]
    seen = Counter(m for e in entries.load(ctx, bank, "k") for m in MARKER.findall(e.content))
    expected = {f"M{w}-{i}" for w in range(2) for i in range(PER_WRITER)}
    assert set(seen) == expected, f"lost writes: {sorted(expected - set(seen))}"
    assert set(seen.values()) == {1}


def test_two_processes_compact_one_partition_at_once(
    s3: S3, prefix: str, ctx: Context, pool: Pool, tmp_path: Path
) -> None:
    ctx.completer = PlainCompleter
    bank = make_bank(ctx, max_turns=6)
    keys = [f"k{i}" for i in range(3)]
    written = {key: write_turns(ctx, bank, key, 7, start=100 * i) for i, key in enumerate(keys)}
    before = {key: [e.id for e in stored] for key, stored in written.items()}
    jobs = [(ctx.store.uri, ctx.account, bank.id, keys, str(tmp_path), w) for w in range(2)]

    statuses = pool.starmap(compact_at_gate, jobs, chunksize=1)

    for key in keys:
        assert_no_loss(entries.load(ctx, bank, key), before[key])
    for key in keys:  # settle what a lost race left over the threshold
        compact_partition(ctx, bank, key)
        after = entries.load(ctx, bank, key)
        assert_exactly_once(after, before[key])
        assert [e.kind for e in after].count("summary") == 1, (key, statuses)
    # A prune whose rewrite lost the race to the other process left its copy for LanceDB's
    # 7-day cleanup: on object storage no lock keeps other writers out, so the store deletes
    # unreferenced files only when told no other process writes (as now: both are done).
    sole = LanceStore(ctx.store.uri, tuning=StoreTuning(delete_unverified=True))
    sole.prune(bank.id)
    # the summarised entries' text is in no object (the summaries repeat none of it)
    present = {e.id for e in entries.read(ctx, bank)}
    gone = [
        e.content.encode() for stored in written.values() for e in stored if e.id not in present
    ]
    objects = s3.contents(prefix)
    left = {text: [k for k, data in objects.items() if text in data] for text in gone}
    assert not any(left.values()), left
