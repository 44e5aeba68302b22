"""The same bench on two commits, side by side in one run: is the code under it slower?

Usage: python bench/versus.py [--base REF] [--rounds 2] -- SCRIPT [ARGS...]
       e.g. python bench/versus.py --base 771b872 -- bench/write.py --entries 5000 --skip-e2e

A checkout of `--base` (default: the previous commit of `main`'s first parent, `main~1`) is
made with `git worktree add` under the system temp folder (reused when it exists). Each round
runs SCRIPT once in the base checkout and once in this one, alternating which goes first, so
drift from other load hits both alike. Each run uses its own checkout's copy of SCRIPT (the
bench's own code follows the API it measures) with `PYTHONPATH` set to that checkout, in this
environment's interpreter (the lock's dependencies). From each run's stdout it keeps every
number printed as `NAME ... 1.23x` (the bench's own ratio to its in-run baseline, which
cancels machine noise) and the numbers of the last JSON object line, and reports for each the
median over the rounds, base and head, and head / base. The last stdout line is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RATIO_LINE = re.compile(r"^\s*(?P<name>[A-Za-z][\w /+.()-]*?)\s+(?P<value>\d+(?:\.\d+)?)x\b", re.M)


def _checkout(ref: str) -> Path:
    sha = subprocess.run(
        ["git", "rev-parse", "--short", ref], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    path = Path(tempfile.gettempdir()) / f"membank-base-{sha}"
    if not path.exists():
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(path), sha],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
    return path


def _numbers(value: object, prefix: str = "") -> dict[str, float]:
    if isinstance(value, bool):
        return {}
    if isinstance(value, int | float):
        return {prefix: float(value)}
    if isinstance(value, dict):
        out: dict[str, float] = {}
        for key, item in value.items():
            out.update(_numbers(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {}


def figures(stdout: str) -> dict[str, float]:
    """Return the ratios (`name ... 1.23x`) and the last JSON line's numbers of one run."""
    found = {f"{m['name'].strip()} (x)": float(m["value"]) for m in RATIO_LINE.finditer(stdout)}
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                found.update(_numbers(json.loads(line)))
            except json.JSONDecodeError:
                continue
            break
    return found


def _run(tree: Path, script: list[str]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, *script], cwd=tree, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{script[0]} failed in {tree}:\n{done.stderr[-2000:]}")
    return figures(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main~1")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("script", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    script = [a for a in options.script if a != "--"]
    if not script:
        parser.error("name the bench to run after --, e.g. -- bench/write.py --entries 5000")
    base = _checkout(options.base)
    runs: dict[str, list[dict[str, float]]] = {"base": [], "head": []}
    for round_ in range(options.rounds):
        order = [("base", base), ("head", ROOT)]
        for side, tree in order if round_ % 2 == 0 else order[::-1]:
            runs[side].append(_run(tree, script))
    names = sorted(set(runs["base"][0]) & set(runs["head"][0]))
    report: dict[str, dict[str, float]] = {}
    print(f"{' '.join(script)}: base {options.base} vs head, {options.rounds} rounds, medians")
    print(f"{'figure':<58} {'base':>10} {'head':>10} {'head/base':>10}")
    for name in names:
        b = statistics.median(r[name] for r in runs["base"] if name in r)
        h = statistics.median(r[name] for r in runs["head"] if name in r)
        ratio = h / b if b else float("nan")
        report[name] = {"base": b, "head": h, "head_over_base": ratio}
        print(f"{name[:58]:<58} {b:10.4g} {h:10.4g} {ratio:10.3f}")
    print(json.dumps({"base": options.base, "rounds": options.rounds, "figures": report}))


if __name__ == "__main__":
    main()
