"""The LangGraph example runs offline (a scripted chat model calling LangMem's tools on
`MembankStore`) and the memory it saved is found by the real `membank search`."""

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


@pytest.mark.process
def test_the_agent_saves_a_memory_that_membank_search_finds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "db")
    example = load_example()
    assert example.main(["--data", data, "--user", "alice"]) == 0

    out = capsys.readouterr().out
    # the second conversation's search tool found the first one's memory in membank
    recalled = [line for line in out.splitlines() if line.startswith("[search_memory]")]
    assert recalled and "The user prefers dark mode" in recalled[0]
    assert out.rstrip().endswith("ai: You told me you prefer dark mode.")

    script = Path(sys.executable).parent / "membank"
    found = subprocess.run(
        [str(script), "search", "memories", "which theme?  dark mode", "--json", "--data", data],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert [hit["entry"]["content"] for hit in hits][:1] == [
        "The user prefers dark mode in every app"
    ]
    assert hits[0]["entry"]["key"].startswith("alice.")
