"""One-entry forget on a large conversation bank: the answer (entry unreadable everywhere)
vs the whole final deletion, alternating, on the same bank.

Usage: python bench/forget.py [--entries 300000] [--neighbours] [--forgets 5]

Builds one bank the way `bench/retention.py` does (appended in time order, maintained; with
`--neighbours` every row carries the turn before it), then forgets `--forgets` entries each
way, alternating which goes first:
- answer: `memory.ops.entries.forget(..., final=False)`, what `membank forget` and the REST
  API wait for; then `finish_forget` (the prune they run after answering), timed apart;
- final: `memory.ops.entries.forget(...)` with `final=True` (the behaviour before issue 24).
After each answer the entry is checked unreadable (`get_entry` raises NotFound); after
each finish the bank is checked final (`verify`). Target: answer median under 0.5 s at 300k.
The last line of stdout is a JSON object (`ratio`: answer median / final median).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retention import build, context

from memory import entries as entry_mod
from memory import verify
from memory.errors import NotFound
from memory.ops import entries as entry_ops


def run(folder: Path, entries: int, forgets: int, neighbours: bool) -> dict[str, object]:
    """Return the figures."""
    ctx = context(str(folder / "a"))
    started = time.perf_counter()
    bank = build(ctx, entries, 3650, neighbours=neighbours)
    print(f"built {entries:,} entries in {time.perf_counter() - started:.1f} s")
    victims = ctx.store.scan(bank.id, columns=["entry_id"]).column("entry_id")
    answer: list[float] = []
    until_final: list[float] = []
    final: list[float] = []
    for n in range(forgets):
        fast_id, slow_id = victims[n * 997].as_py(), victims[n * 997 + 501].as_py()

        def fast(entry_id: str = fast_id) -> None:
            started = time.perf_counter()
            result = entry_ops.forget(ctx, entry_ops.ForgetRequest(bank.id, entry_id, final=False))
            answer.append(time.perf_counter() - started)
            try:
                entry_mod.get_entry(ctx, bank, entry_id)
                raise AssertionError("readable after forget")
            except NotFound:
                pass
            receipt = entry_ops.finish_forget(ctx, result)
            until_final.append(time.perf_counter() - started)
            assert receipt.final_at is not None
            assert verify.verify_bank(ctx, bank).clean

        def slow(entry_id: str = slow_id) -> None:
            started = time.perf_counter()
            entry_ops.forget(ctx, entry_ops.ForgetRequest(bank.id, entry_id))
            final.append(time.perf_counter() - started)

        for side in (fast, slow) if n % 2 == 0 else (slow, fast):
            side()
    figures = {
        "entries": entries,
        "neighbours": neighbours,
        "answer_median_s": round(statistics.median(answer), 3),
        "answer_max_s": round(max(answer), 3),
        "until_final_median_s": round(statistics.median(until_final), 3),
        "final_forget_median_s": round(statistics.median(final), 3),
        "ratio": round(statistics.median(answer) / statistics.median(final), 3),
        "target_met": statistics.median(answer) < 0.5,
    }
    print(
        f"forget on {entries:,} entries (median of {forgets}): answers in "
        f"{figures['answer_median_s']} s, final {figures['until_final_median_s']} s after the "
        f"call; a forget that waits for the prune: {figures['final_forget_median_s']} s"
    )
    return figures


def main() -> None:
    """Build, time and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=300_000)
    parser.add_argument("--forgets", type=int, default=5)
    parser.add_argument("--neighbours", action="store_true", help="rows carry the turn before")
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: temp)")
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="membank-forget-"))
    try:
        figures = run(folder, args.entries, args.forgets, args.neighbours)
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
