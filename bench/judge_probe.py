"""The recall probe's word matching, side by side: the judge's stems (`memory.judge.text.stem`,
what the probe uses) against the trailing-"s" stripping it used before, on synthetic sets.

Usage: python bench/judge_probe.py [--seeds 20] [--count 24] [--max-tokens 300]

Per seed and description, a synthetic set with planted facts is summarized by the offline
extractive summarizer (as `membank test-compaction --synthetic --max-tokens N` runs it: a
tight budget, so facts are dropped) and the probe asks one question per fact, answered from
the summary (plus the surviving entry) and from the full history. Counts are totals over
all sets; an answer is right when its sentence holds the fact's value. The last line of
stdout is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable

from memory.judge import text as t
from memory.prompt_lab import SyntheticSource, run_test
from memory.prompt_lab import probe as probe_module
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder

DESCRIPTIONS = ("support for espresso machines", "weekly team meeting notes", "travel bookings")
PROMPT = "Summarize these entries. Keep names, numbers, dates and decisions."


def crude(text: str) -> set[str]:
    """The probe's stems before: content words with one trailing "s" removed."""
    return {word.removesuffix("s") for word in t.content_words(text)}


def totals(
    seeds: int, count: int, max_tokens: int, stems: Callable[[str], set[str]]
) -> dict[str, int]:
    """Return the probe's totals over the synthetic sets with `stems` as its word matcher."""
    from memory.context import Context

    saved = probe_module._stems
    probe_module._stems = stems
    found = {"questions": 0, "from_summary": 0, "from_history": 0}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            ctx = Context(store=LanceStore(tmp), embedder=hashing_embedder)
            for seed in range(seeds):
                for description in DESCRIPTIONS:
                    source = SyntheticSource(description=description, count=count, seed=seed)
                    run = run_test(ctx, source, prompt=PROMPT, max_tokens=max_tokens, save=False)
                    assert run.probe is not None
                    found["questions"] += len(run.probe.answers)
                    found["from_summary"] += run.probe.from_summary
                    found["from_history"] += run.probe.from_history
    finally:
        probe_module._stems = saved
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--max-tokens", type=int, default=300)
    args = parser.parse_args()
    rows = {
        "judge stems": totals(args.seeds, args.count, args.max_tokens, probe_module._stems),
        "trailing s": totals(args.seeds, args.count, args.max_tokens, crude),
    }
    print(f"{'matcher':12} {'questions':>9} {'from summary':>12} {'from history':>12}")
    for name, row in rows.items():
        print(f"{name:12} {row['questions']:9} {row['from_summary']:12} {row['from_history']:12}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
