"""`kill -9` right after each commit of a deletion (retention, compaction, forget), then a later
run finishes it: the deleted text is on disk after the kill and gone after the finishing run.

Each case runs in its own storage folder. A child process (started with subprocess, all at
once: each pays the import of lancedb) does the deletion on the real store and SIGKILLs itself
right after one of its commits: the "prune due" mark, the delete, or the prune. The parent
then checks the files (positive control), runs the finishing step (the same operation again,
a plain write, or `maintain`), and checks the files, `verify` and the bank's counters.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from compaction_support import ExtractiveCompleter, make_bank, turn

from memory import banks, entries, retention, verify
from memory.compaction.apply import compact_partition
from memory.compaction.bank import compact_bank
from memory.context import Context
from memory.errors import NotFound
from memory.models import Bank, EntryIn
from memory.store.lance import LanceStore
from memory.testing import HashingEmbedder

TESTS = Path(__file__).resolve().parent
ACCOUNT = "acme"

CHILD = r"""
import os, signal, sys, tempfile
from pathlib import Path
sys.pycache_prefix = str(Path(tempfile.gettempdir()) / "membank-test-pycache")
sys.dont_write_bytecode = False

uri, bank_id, op, target, die_after = sys.argv[1:6]
from memory.compaction.apply import compact_partition
from memory.compaction.bank import compact_bank
from compaction_support import worker_context
from memory import banks, entries, retention

ctx = worker_context(uri, "acme", completer="extractive")
store = ctx.store
real = getattr(store, die_after)

def dying(*args, **kwargs):
    result = real(*args, **kwargs)
    if die_after != "mark_deletion" or kwargs.get("pending"):
        os.kill(os.getpid(), signal.SIGKILL)  # right after the commit: nothing else runs
    return result

setattr(store, die_after, dying)
bank = banks.get(ctx, bank_id)
if op == "retention":
    retention.apply_retention(ctx, bank)
elif op == "compaction":
    compact_bank(ctx, bank)
else:
    entries.forget(ctx, bank, target)
sys.exit(3)  # the kill did not happen
"""

KILL_POINTS = {"mark": "mark_deletion", "delete": "delete_where", "prune": "prune"}
"""Where the child dies: right after this store method's commit returns."""


@dataclass
class Case:
    """One deletion killed at one point, and the run that must finish it."""

    op: str
    kill: str
    finisher: str
    needle: str = ""
    uri: str = ""
    bank: Bank | None = None
    target: str = "-"

    @property
    def name(self) -> str:
        """Return a label (folder name and assertion message)."""
        return f"{self.op}-{self.kill}-{self.finisher}"


CASES = [
    *(
        Case(op, kill, "rerun")
        for op in ("retention", "compaction", "forget")
        for kill in KILL_POINTS
    ),
    Case("retention", "delete", "maintain"),
    Case("compaction", "delete", "write"),
    Case("forget", "delete", "write"),
]
"""Every commit of each deletion, finished by a re-run; after the delete commit, also by a
plain write or by `maintain`."""


def _context(uri: str) -> Context:
    """Return a parent-side context on `uri` (system clock: the child's retention uses it)."""
    return Context(
        store=LanceStore(uri), account=ACCOUNT, embedder=lambda m: HashingEmbedder(m.dims)
    )


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _said(key: str, text: str, **extra: object) -> EntryIn:
    return EntryIn.model_validate({"key": key, "speaker": "alice", "content": text, **extra})


def _prepare(case: Case, root: Path) -> None:
    """Make the case's bank: the entry holding the needle is the one the deletion removes."""
    case.uri = str(root / case.name)
    case.needle = f"qx{case.name.replace('-', '')}needle"
    ctx = _context(case.uri)
    secret = f"my card number is {case.needle}"
    if case.op == "retention":
        bank = make_bank(ctx, retention_days=30, compaction_prompt=None)
        old = datetime.now(UTC) - timedelta(days=30, hours=2)  # expired ...
        entries.write(ctx, bank, [_said("k", secret, created_at=old)])
        later = old + timedelta(hours=4)  # ... and carried by a turn retention keeps
        (kept,) = entries.write(ctx, bank, [_said("k", "a later note", created_at=later)])
        docs = ctx.store.index_documents(bank.id).to_pylist()  # type: ignore[attr-defined]
        (doc,) = [d for d in docs if d["entry_id"] == kept.id]
        assert doc["search_text"].endswith(secret)  # positive control: a copy in a carrier
        entries.write(ctx, bank, [_said("k", "a recent note")])
    elif case.op == "compaction":  # no prompt: the overflow is dropped, nothing summarises it
        bank = make_bank(ctx, max_turns=4, compaction_prompt=None)
        entries.write(ctx, bank, [_said("k", secret)])
        entries.write(ctx, bank, [turn("k", i) for i in range(5)])
    else:
        bank = make_bank(ctx, compaction_prompt=None)
        entries.write(ctx, bank, [_said("k", "first note")])
        (gone,) = entries.write(ctx, bank, [_said("k", secret)])
        entries.write(ctx, bank, [_said("k", "last note")])
        case.target = gone.id
    case.bank = bank


def _finish(case: Case, ctx: Context, bank: Bank) -> None:
    """Run the case's finishing step."""
    if case.finisher == "write":
        entries.write(ctx, bank, [_said("other", "a later write")])
    elif case.finisher == "maintain":
        assert verify.maintain_bank(ctx, bank).clean, case.name
    elif case.op == "retention":
        result = retention.apply_retention(ctx, bank)
        assert result.status == ("deleted" if case.kill == "mark" else "nothing_expired")
        assert result.finished_pending is (case.kill == "delete"), case.name
    elif case.op == "compaction":
        compact_bank(ctx, bank)
    elif case.kill == "mark":  # killed before the delete: this forget deletes it
        entries.forget(ctx, bank, case.target)
    else:
        with pytest.raises(NotFound, match=None if case.kill == "prune" else "finished now"):
            entries.forget(ctx, bank, case.target)


def test_kill_9_after_each_deletion_commit_then_a_later_run_finishes_it(tmp_path: Path) -> None:
    for case in CASES:
        _prepare(case, tmp_path)
        assert _files_containing(Path(case.uri), case.needle.encode()), case.name  # control
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    children = {
        case.name: subprocess.Popen(
            [
                sys.executable,
                "-c",
                CHILD,
                case.uri,
                case.bank.id,
                case.op,
                case.target,  # type: ignore[union-attr]
                KILL_POINTS[case.kill],
            ],
            env=env,
            stderr=subprocess.PIPE,
        )
        for case in CASES
    }
    for name, child in children.items():
        _, err = child.communicate(timeout=300)
        assert child.returncode == -signal.SIGKILL, f"{name}: not killed: {err.decode()[-2000:]}"

    for case in CASES:
        ctx = _context(case.uri)
        bank = banks.get(ctx, case.bank.id)  # type: ignore[union-attr]
        on_disk = _files_containing(Path(case.uri), case.needle.encode())
        if case.kill != "prune":  # the kill left the deleted text in the files
            assert on_disk, case.name
        if case.kill == "delete":
            assert not verify.verify_bank(ctx, bank).clean, case.name

        _finish(case, ctx, bank)

        assert _files_containing(Path(case.uri), case.needle.encode()) == [], case.name
        health = verify.verify_bank(ctx, banks.get(ctx, bank.id))
        assert health.clean, f"{case.name}: {health.problems}"
        assert health.stored and health.derived, case.name
        assert health.stored.summary_count == health.derived.summary_count, case.name
        texts = " ".join(e.content for e in entries.read(ctx, bank))
        assert case.needle not in texts, case.name
        if case.op == "compaction":
            assert banks.get(ctx, bank.id).last_compaction_at is not None, case.name


def test_kill_9_after_a_summarising_compaction_then_counters_are_repaired(
    tmp_path: Path,
) -> None:
    """Killed after the prune, before the bank record was saved: a re-run repairs the count
    and the last compaction time from the summaries' own record."""
    uri = str(tmp_path / "db")
    ctx = _context(uri)
    ctx.completer = ExtractiveCompleter
    bank = make_bank(ctx, max_turns=6)
    entries.write(ctx, bank, [turn("k", i) for i in range(7)])
    compact_partition(ctx, bank, "k")  # a first summary: summary_count 1
    first = banks.get(ctx, bank.id).last_compaction_at
    entries.write(ctx, bank, [turn("k", i) for i in range(7, 11)])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    child = subprocess.run(
        [sys.executable, "-c", CHILD, uri, bank.id, "compaction", "-", "prune"],
        env=env,
        capture_output=True,
        timeout=300,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
    stale = banks.get(ctx, bank.id)
    assert stale.last_compaction_at == first  # the kill came before the record was saved
    assert not verify.verify_bank(ctx, stale).clean

    compact_bank(ctx, stale)

    repaired = banks.get(ctx, bank.id)
    summaries = [e for e in entries.read(ctx, bank) if e.kind == "summary"]
    assert repaired.summary_count == len(summaries) == 1
    made = datetime.fromisoformat(summaries[0].metadata[verify.COMPACTED_AT])
    assert repaired.last_compaction_at is not None and repaired.last_compaction_at >= made
    assert verify.verify_bank(ctx, repaired).clean
