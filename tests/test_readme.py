"""The README's Python API example runs as shown (offline, in a fresh folder)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_python_api_example_runs(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "the README has one Python example"
    for run in ("first", "second"):  # a reader runs it again on the same storage
        out = subprocess.run(
            [sys.executable, "-c", blocks[0]], cwd=tmp_path, capture_output=True, text=True
        )
        assert out.returncode == 0, f"{run} run: {out.stderr}"
        assert "customer-1: My order #88213 arrived with a cracked tank." in out.stdout
    assert (tmp_path / ".membank").is_dir()
