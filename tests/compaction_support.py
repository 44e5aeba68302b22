"""Helpers shared by the compaction tests: banks, entries, invariants, and the CLI run in this
process (the completers they use are in memory/testing.py)."""

from __future__ import annotations

import io
import multiprocessing
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from multiprocessing.pool import Pool
from pathlib import Path

import pytest

from memory import banks, entries
from memory.compaction.bank import compact_if_over
from memory.config import CONFIG_DIR_ENV
from memory.context import Context
from memory.models import Bank, BankCreate, Entry, EntryIn
from memory.ops import entries as ops_entries
from memory.testing import MARKER, MarkerCompleter
from memory.testing import CountingExtractiveCompleter as ExtractiveCompleter

__all__ = ["MARKER", "ExtractiveCompleter", "MarkerCompleter"]  # moved; tests import them here


def run(*args: str, context: Context | None = None) -> tuple[int, str, str]:
    """Run membank in this process (on `context` when given); returns (code, stdout, stderr)."""
    from flows.cli import main  # here: spawned workers import this module and need no CLI

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        if context is None:
            code = main(list(args))
        else:
            code = main(list(args), context=lambda data: context)
    return code, out.getvalue(), err.getvalue()


def config_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **files: str) -> Path:
    """Return a folder named by MEMBANK_CONFIG_DIR holding the given files (modes_yaml=...)."""
    folder = tmp_path / "my-configs"
    folder.mkdir()
    for name, text in files.items():
        (folder / name.replace("_", ".")).write_text(text, encoding="utf-8")
    monkeypatch.setenv(CONFIG_DIR_ENV, str(folder))
    return folder


def make_bank(ctx: Context, name: str = "chat", **fields: object) -> Bank:
    """Create a conversation bank (fields override type, prompt and thresholds)."""
    values: dict[str, object] = {
        "name": name,
        "type": "conversation",
        "compaction_prompt": "Keep every fact, name, number and date.",
    }
    values.update(fields)
    return banks.create(ctx, BankCreate.model_validate(values))


def turn(key: str, index: int, speaker: str | None = "alice") -> EntryIn:
    """Return a distinctive entry: every turn carries its own number, amount and date."""
    day = index % 28 + 1
    text = f"Turn {index}: order #{1000 + index} cost ${index * 7} and ships on May {day}."
    return EntryIn(key=key, speaker=speaker, content=text)


def write_turns(
    ctx: Context, bank: Bank, key: str, count: int, *, start: int = 0, compact: bool = False
) -> list[Entry]:
    """Write `count` turns in one commit (then compact the partition if over, with
    `compact`, as a user's write through `memory.ops.entries.write` does)."""
    speaker = "alice" if bank.type == "conversation" else None
    items = [turn(key, start + i, speaker) for i in range(count)]
    written = entries.write(ctx, bank, items)
    if compact:
        compact_if_over(ctx, bank, {key})
    return written


def coverage(stored: Iterable[Entry], originals: Iterable[str]) -> Counter[str]:
    """Return, per original id, how many times it survives: present + summaries covering it."""
    stored = list(stored)
    present = {e.id for e in stored}
    counts: Counter[str] = Counter()
    for original in originals:
        counts[original] = int(original in present) + sum(
            original in s.summary_of for s in live_summaries(stored)
        )
    return counts


def live_summaries(stored: Sequence[Entry]) -> list[Entry]:
    """Return the summaries no other stored summary replaces (a replaced one awaits deletion)."""
    summaries = [e for e in stored if e.kind == "summary"]
    replaced = {i for s in summaries for i in s.summary_of}
    return [s for s in summaries if s.id not in replaced]


def assert_no_loss(stored: Sequence[Entry], originals: Iterable[str]) -> None:
    """Assert every original is present or summarised, and no two summaries overlap."""
    counts = coverage(stored, originals)
    lost = [i for i, c in counts.items() if c == 0]
    assert not lost, f"entries lost: {lost}"
    seen: Counter[str] = Counter(i for s in live_summaries(stored) for i in s.summary_of)
    twice = [i for i, c in seen.items() if c > 1]
    assert not twice, f"entries summarised twice: {twice}"


def assert_exactly_once(stored: Sequence[Entry], originals: Iterable[str]) -> None:
    """Assert every original is either present or covered by exactly one summary, not both."""
    counts = coverage(stored, originals)
    wrong = {i: c for i, c in counts.items() if c != 1}
    assert not wrong, f"entries kept and summarised, or lost: {wrong}"


def worker_context(uri: str, account: str, completer: str = "markers") -> Context:
    """Return a context for a child process: hashing embedder and a test completer."""
    from memory.store.lance import LanceStore
    from memory.testing import HashingEmbedder

    chosen: MarkerCompleter | ExtractiveCompleter = (
        MarkerCompleter() if completer == "markers" else ExtractiveCompleter()
    )
    return Context(
        store=LanceStore(uri),
        account=account,
        embedder=lambda mode: HashingEmbedder(mode.dims),
        completer=lambda: chosen,
    )


def write_markers(uri: str, account: str, bank_id: str, key: str, writer: int, count: int) -> int:
    """Write `count` entries `M<writer>-<i>` one per commit, inline compaction on; returns count."""
    import memory.compaction  # noqa: F401  (registers inline compaction in this process)

    ctx = worker_context(uri, account)
    bank = banks.get(ctx, bank_id)
    for index in range(count):
        item = EntryIn(key=key, speaker=f"w{writer}", content=f"note M{writer}-{index} here")
        entries.write(ctx, bank, [item])
    return count


def compact_and_die(uri: str, account: str, bank_id: str, key: str, step: str) -> None:
    """Compact a partition and SIGKILL this process at `step` (a crash at that point)."""
    import os
    import signal

    from memory.compaction.apply import compact_partition

    def die(at: str) -> None:
        if at == step:
            os.kill(os.getpid(), signal.SIGKILL)

    ctx = worker_context(uri, account, completer="extractive")
    compact_partition(ctx, banks.get(ctx, bank_id), key, checkpoint=die)


def write_recent(uri: str, account: str, bank_id: str, key: str, count: int) -> list[str]:
    """Write `count` entries dated now, one per commit; returns their ids."""
    ctx = worker_context(uri, account)
    bank = banks.get(ctx, bank_id)
    written: list[str] = []
    for index in range(count):
        item = EntryIn(key=key, speaker="writer", content=f"recent note {index}")
        written.extend(e.id for e in entries.write(ctx, bank, [item]))
    return written


@contextmanager
def spawn_pool(processes: int) -> Iterator[Pool]:
    """Return a pool of spawned processes (never forked: forking a LanceDB user is unsafe)."""
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        yield pool


def user_write(ctx: Context, bank: Bank, items: Sequence[EntryIn]) -> list[Entry]:
    """Write as a user does (`memory.ops.entries.write`: append, then compact the touched
    partitions over a threshold); returns the stored entries."""
    return ops_entries.write(ctx, ops_entries.WriteRequest(bank=bank.id, items=list(items))).entries
