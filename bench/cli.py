"""Whole-process start-up of CLI commands vs a baseline process doing the irreducible part.

Usage: python bench/cli.py [--runs 5] [--dir DIR]

Each command runs as a new process (`python -m flows.cli ...`, what the `membank` script
runs) on a small bank: `write` (no compaction), a compacting `write` (a bank with
`max_turns=2`, so every write summarizes offline), `search`, `stats`. The baseline is a
process that only imports lancedb and loads the default embedder, embedding one text: what
any command that embeds must do. Runs alternate (baseline, then each command) so drift from
other load hits all alike; the median of `--runs` is reported. Target: each command at most
1.3x the baseline. The last line of stdout is a JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = (
    "import lancedb\n"
    "from memory.providers.embed import embedder_for\n"
    "embedder_for('membank/minilm-l6-int8', 384).embed(['hello there'])\n"
)


def _run(args: list[str], env: dict[str, str]) -> float:
    """Return the wall time of one process; fail loudly if it fails."""
    started = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=None)
    options = parser.parse_args()
    folder = Path(options.dir or tempfile.mkdtemp(prefix="membank-cli-bench-"))
    data = str(folder / "db")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MEMBANK_URI": data}
    env.pop("MEMBANK_LLM_MODEL", None)
    cli = [sys.executable, "-m", "flows.cli"]
    setup = [
        ["bank", "create", "--name", "plain", "--type", "conversation"],
        ["bank", "create", "--name", "tight", "--type", "conversation", "--max-turns", "2",
         "--compaction-prompt", "Keep every fact."],
    ]  # fmt: skip
    for args in setup:
        _run([*cli, *args], env)
    for i in range(3):
        _run([*cli, "write", "plain", "--key", "c1", "--speaker", "ann", f"Order #{i} ships."], env)
        _run([*cli, "write", "tight", "--key", "c1", "--speaker", "ann", f"Order #{i} ships."], env)
    commands = {
        "write": ["write", "plain", "--key", "c2", "--speaker", "ann", "The tank ships Monday."],
        "write (compacting)": [
            "write", "tight", "--key", "c1", "--speaker", "ann", "The tank ships Monday.",
        ],
        "search": ["search", "plain", "when does the tank ship"],
        "stats": ["stats", "plain"],
    }  # fmt: skip
    times: dict[str, list[float]] = {"baseline": [], **{name: [] for name in commands}}
    for _ in range(options.runs):
        times["baseline"].append(_run([sys.executable, "-c", BASELINE], env))
        for name, args in commands.items():
            times[name].append(_run([*cli, *args], env))
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians["baseline"]
    print(f"{'process':<20} {'median s':>9} {'x baseline':>11}")
    for name, value in medians.items():
        print(f"{name:<20} {value:>9.2f} {value / base:>11.2f}")
    ratios = {name: round(value / base, 2) for name, value in medians.items()}
    print(json.dumps({"runs": options.runs, "median_s": medians, "ratio": ratios}))


if __name__ == "__main__":
    main()
