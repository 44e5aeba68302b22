"""Wiring: writes through ops compact, appending never does; no import cycles or heavy imports."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory import banks, entries
from memory.context import Context
from memory.models import BankCreate, EntryIn
from memory.ops import entries as ops_entries
from memory.store.lance import LanceStore
from memory.testing import HashingEmbedder

MEMORY = Path(__file__).resolve().parents[1] / "memory"
HEAVY = ("litellm", "prefect", "deepeval", "streamlit")


def _bank_with_three_turns(ctx: Context) -> banks.Bank:
    create = BankCreate(
        name="chat", type="conversation", max_turns=3, compaction_prompt="Keep every fact."
    )
    return banks.create(ctx, create)


def _five_turns(ctx: Context, bank: banks.Bank) -> None:
    for i in range(5):
        item = EntryIn(key="c1", speaker="alice", content=f"Turn {i}: order #{100 + i} ships.")
        ops_entries.write(ctx, ops_entries.WriteRequest(bank=bank.id, items=[item]))


def test_a_write_through_ops_compacts_the_partition_it_takes_over(tmp_path: Path) -> None:
    ctx = Context(
        store=LanceStore(str(tmp_path / "db")), embedder=lambda m: HashingEmbedder(m.dims)
    )
    bank = _bank_with_three_turns(ctx)
    _five_turns(ctx, bank)
    stored = entries.load(ctx, bank, "c1")
    assert len(stored) < 5
    assert [e.kind for e in stored].count("summary") == 1
    assert stored[-1].content == "Turn 4: order #104 ships."  # the newest stays verbatim


def test_the_write_result_says_what_it_compacted(tmp_path: Path) -> None:
    ctx = Context(
        store=LanceStore(str(tmp_path / "db")), embedder=lambda m: HashingEmbedder(m.dims)
    )
    _bank_with_three_turns(ctx)
    results = []
    for i in range(4):
        item = EntryIn(key="c1", speaker="alice", content=f"Turn {i}.")
        results.append(ops_entries.write(ctx, ops_entries.WriteRequest(bank="chat", items=[item])))
    assert [len(r.compacted) for r in results] == [0, 0, 0, 1]
    assert results[-1].compacted[0].status == "compacted"


def test_appending_entries_never_compacts(tmp_path: Path) -> None:
    """`memory.entries.write` only appends: compaction is the caller's explicit next step."""
    ctx = Context(
        store=LanceStore(str(tmp_path / "db")), embedder=lambda m: HashingEmbedder(m.dims)
    )
    bank = _bank_with_three_turns(ctx)
    for i in range(5):
        entries.write(ctx, bank, [EntryIn(key="c1", speaker="alice", content=f"Turn {i}.")])
    assert [e.kind for e in entries.load(ctx, bank, "c1")] == ["entry"] * 5


@pytest.mark.process
def test_compaction_after_a_write_does_not_depend_on_what_was_imported(tmp_path: Path) -> None:
    """In a fresh process that imports the ops module before anything else and never names
    memory.compaction, writes still compact (the use case calls it, not an import side
    effect)."""
    code = f"""
from memory.ops import entries
from memory import banks
from memory.context import Context
from memory.models import BankCreate, EntryIn
from memory.store.lance import LanceStore
from memory.testing import HashingEmbedder
store = LanceStore({str(tmp_path / "db")!r})
ctx = Context(store=store, embedder=lambda m: HashingEmbedder(m.dims))
bank = banks.create(ctx, BankCreate(name="chat", type="conversation", max_turns=3,
                                    compaction_prompt="Keep every fact."))
for i in range(5):
    item = EntryIn(key="c1", speaker="alice", content=f"Turn {{i}}.")
    entries.write(ctx, entries.WriteRequest(bank="chat", items=[item]))
print(len(store.entries(bank.id)))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) < 5


def _module_name(path: Path) -> str:
    parts = path.relative_to(MEMORY.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """Return the memory modules `path` imports at module level (not under TYPE_CHECKING):
    `from a.b import c` counts as `a.b.c` when that is a module, else as `a.b`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memory"):
            base = node.module or ""
            for alias in node.names:
                name = f"{base}.{alias.name}"
                found.add(name if name in modules else base)
    return found & modules


def test_memory_modules_have_no_import_cycles() -> None:
    modules = {_module_name(p): p for p in MEMORY.rglob("*.py")}
    graph = {name: _runtime_imports(path, set(modules)) - {name} for name, path in modules.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)


def test_memory_never_imports_flows_or_the_test_doubles() -> None:
    offenders = []
    for path in MEMORY.rglob("*.py"):
        if path.name == "testing.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            offenders += [
                f"{path.relative_to(MEMORY.parent)}: {n}"
                for n in names
                if n.split(".")[0] == "flows" or n == "memory.testing"
            ]
    assert offenders == []


def _membank(data: Path, *commands: list[str]) -> list[tuple[str, list[str]]]:
    """Run the membank `commands` one after another in one fresh process; return, after
    each, the command and the heavy modules imported so far (a module stays imported, so
    the first command to import one is the first to name it)."""
    calls = [[*args, "--data", str(data)] for args in commands]
    code = (
        "import json, sys\n"
        "from memory.cli import main\n"
        f"for args in {calls!r}:\n"
        "    code = main(args)\n"
        f"    heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "    print(json.dumps({'args': args[0], 'code': code, 'heavy': heavy}))\n"
    )
    env = {**os.environ, "MEMBANK_LLM_MODEL": "membank/extractive"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert out.returncode == 0, out.stderr
    results = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert [r["code"] for r in results] == [0] * len(commands), out.stderr
    return [(r["args"], r["heavy"]) for r in results]


@pytest.mark.process
def test_offline_commands_never_import_litellm_prefect_deepeval_or_streamlit(
    tmp_path: Path,
) -> None:
    data = tmp_path / "db"
    create = ["bank", "create", "--name", "chat", "--type", "conversation"]
    commands = [[*create, "--max-turns", "3", "--compaction-prompt", "Keep every fact."]]
    for i in range(4):  # the 4th write goes over max_turns: it compacts
        turn = f"Turn {i}: order #{100 + i} ships on May {i + 1}."
        commands.append(["write", "chat", "--key", "c1", "--speaker", "alice", turn])
    commands += [["search", "chat", "order ships"], ["load", "chat", "--key", "c1"]]
    commands.append(["stats", "chat"])
    seen = _membank(data, *commands)
    assert [command for command, _ in seen] == [c[0] for c in commands]  # every one ran
    assert [heavy for _, heavy in seen] == [[]] * len(commands)
    ctx = Context(store=LanceStore(str(data)))
    loaded = entries.load(ctx, banks.get(ctx, "chat"), "c1")
    assert "summary" in [e.kind for e in loaded]  # the write did compact
