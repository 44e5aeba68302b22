"""The LangGraph example runs offline (a scripted chat model calling LangMem's tools on
`MembankStore`) and the memory it saved is a long-term memory of the user: the real
`membank memory recall` finds it, `membank memory list` shows it, `membank user wipe`
deletes it."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.filterwarnings(
    "ignore:Importing Send from langgraph.constants:DeprecationWarning"
)

EXAMPLE = Path(__file__).parents[2] / "examples" / "langgraph_memory.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("langgraph_memory", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def membank(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run the installed `membank` console script."""
    script = Path(sys.executable).parent / "membank"
    return subprocess.run(
        [str(script), *argv], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.process
def test_the_agents_memory_is_recalled_by_membank_memory_recall(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("MEMBANK_URI", "MEMBANK_ACCOUNT"):
        monkeypatch.delenv(name, raising=False)
    data = str(tmp_path / "db")
    example = load_example()
    assert example.main(["--data", data, "--user", "alice"]) == 0

    out = capsys.readouterr().out
    # the second conversation's search tool found the first one's memory in membank
    recalled = [line for line in out.splitlines() if line.startswith("[search_memory]")]
    assert recalled and "The user prefers dark mode" in recalled[0]
    assert "ai: You told me you prefer dark mode." in out
    assert f'membank memory recall --user alice "dark mode" --data {data}' in out

    found = membank("memory", "recall", "--user", "alice", "dark mode", "--json", "--data", data)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert [hit["memory"]["content"] for hit in hits] == ["The user prefers dark mode in every app"]
    assert hits[0]["memory"]["user"] == "alice" and hits[0]["memory"]["tags"] == []

    from memory.cli import main  # the same command in this process (a second start costs)

    assert main(["memory", "recall", "--user", "bob", "dark mode", "--json", "--data", data]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["memory", "list", "--user", "alice", "--json", "--data", data]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [memory["id"] for memory in listed] == [hits[0]["memory"]["id"]]
    assert main(["user", "wipe", "alice", "--json", "--data", data]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert receipt["counts"].get("long_term") == 1 and receipt["counts"].get("langgraph", 0) == 0
    assert main(["memory", "list", "--user", "alice", "--json", "--data", data]) == 0
    assert json.loads(capsys.readouterr().out) == []
