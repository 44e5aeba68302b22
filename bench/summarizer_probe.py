"""Probe the offline extractive summarizer on LoCoMo: compression ratio and answer retention.

Usage: python bench/summarizer_probe.py [--data DIR] [--ratio 0.25] [--per MODE]

MODE: conversation (one summary per conversation), session (one per session), rolling
(session by session into a running summary, budget = ratio x all tokens so far).

Answer retention = of the QA answers (category != 5) whose normalised text appears in the
original turns, the share that still appears in the compressed text. The baseline keeps the
newest turns that fit in the same budget. "strict" counts a match only on word boundaries.
"""

from __future__ import annotations

import argparse
import json
import re
import string
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.providers.summarize import extractive_summary
from memory.providers.tokens import count_tokens

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo"
Summarizer = Callable[[Sequence[str], int], str]


def normalise(text: str) -> str:
    """Return text lowercased, whitespace collapsed, punctuation stripped at both ends."""
    return re.sub(r"\s+", " ", text.lower()).strip().strip(string.punctuation + " ")


def newest_turns(lines: Sequence[str], budget: int) -> str:
    """Return the newest lines that fit in budget tokens (the baseline)."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        cost = count_tokens(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return "\n".join(reversed(kept))


def sessions(conv: dict[str, object]) -> list[list[str]]:
    """Return each non-empty session's turns rendered as 'speaker: text' lines."""
    keys = sorted(
        (k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
    )
    out = []
    for key in keys:
        turns = conv[key]
        assert isinstance(turns, list)
        if turns:
            out.append([f"{t['speaker']}: {t['text']}" for t in turns])
    return out


def compress(groups: list[list[str]], ratio: float, rolling: bool) -> tuple[str, int]:
    """Return the compressed text of groups and the total budget it was given.

    Each group is summarized on its own, or (rolling) merged into the running summary with a
    budget of ratio times all tokens seen so far, as repeated compaction would do.
    """
    outputs, previous, seen, budget = [], "", 0, 0
    for lines in groups:
        tokens = count_tokens("\n".join(lines))
        seen += tokens
        budget = int((seen if rolling else tokens) * ratio)
        summary = extractive_summary(lines, budget, previous_summary=previous)
        assert count_tokens(summary) <= budget, (count_tokens(summary), budget)
        if rolling:
            previous = summary
        else:
            outputs.append(summary)
    return (previous, budget) if rolling else ("\n".join(outputs), 0)


def run(data: Path, ratio: float, per: str) -> dict[str, float]:
    """Return the figures for the summarizer and the baseline over every file in data."""
    totals = dict.fromkeys(["in", "out", "base_out", "answers", "kept", "strict"], 0)
    totals |= {"base_kept": 0, "base_strict": 0}
    elapsed = 0.0
    for path in sorted(data.glob("*.json")):
        conv = json.loads(path.read_text())
        groups = sessions(conv)
        if per == "conversation":
            groups = [[line for group in groups for line in group]]
        start = time.perf_counter()
        summary, _ = compress(groups, ratio, rolling=per == "rolling")
        elapsed += time.perf_counter() - start
        if per == "rolling":
            everything = [line for group in groups for line in group]
            baseline = newest_turns(everything, int(count_tokens("\n".join(everything)) * ratio))
        else:
            baseline = "\n".join(
                newest_turns(lines, int(count_tokens("\n".join(lines)) * ratio)) for lines in groups
            )
        totals["in"] += sum(count_tokens("\n".join(lines)) for lines in groups)
        totals["out"] += count_tokens(summary)
        totals["base_out"] += count_tokens(baseline)
        original = normalise(" ".join(line for group in groups for line in group))
        compressed, base = normalise(summary), normalise(baseline)
        for qa in conv["qa"]:
            if qa.get("category") == 5 or "answer" not in qa:
                continue
            answer = normalise(str(qa["answer"]))
            if not answer or answer not in original:
                continue
            pattern = re.compile(r"(?<!\w)" + re.escape(answer) + r"(?!\w)")
            totals["answers"] += 1
            totals["kept"] += answer in compressed
            totals["strict"] += bool(pattern.search(compressed))
            totals["base_kept"] += answer in base
            totals["base_strict"] += bool(pattern.search(base))
    n = max(totals["answers"], 1)
    return {
        "answers": totals["answers"],
        "compression": round(totals["out"] / totals["in"], 4),
        "retention": round(totals["kept"] / n, 4),
        "retention_strict": round(totals["strict"] / n, 4),
        "baseline_compression": round(totals["base_out"] / totals["in"], 4),
        "baseline_retention": round(totals["base_kept"] / n, 4),
        "baseline_retention_strict": round(totals["base_strict"] / n, 4),
        "seconds": round(elapsed, 2),
    }


def main() -> None:
    """Print the probe's figures as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--ratio", type=float, default=0.25)
    parser.add_argument(
        "--per", choices=["conversation", "session", "rolling"], default="conversation"
    )
    args = parser.parse_args()
    print(json.dumps({"per": args.per, **run(args.data, args.ratio, args.per)}))


if __name__ == "__main__":
    main()
