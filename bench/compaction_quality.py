"""Compaction quality on LoCoMo: compress each conversation to <= 25% of its tokens, then count
how many QA answers survive.

Usage: python bench/compaction_quality.py --data DIR [--per conversation|session] [--ratio 0.25]

Each LoCoMo conversation (`*.json` in DIR) is written into a conversation bank, one entry per
turn (speaker kept), one partition per conversation (or per session with `--per session`).
The bank's `max_tokens` is set to twice the target (compaction ends at half the threshold,
see memory/compaction/plan.py), its compaction prompt to the customer-support style prompt,
and `memory.compaction.compact_partition` runs once per partition through the offline
summarizer (`membank/extractive`, via litellm): the newest turns are kept verbatim and the
rest summarised. Embeddings use the hashing embedder (they play no part in the figures).

Answer retention: of the QA answers (category != 5) whose normalised text appears in the
original turns, the share that still appears in the compacted partitions (summaries plus
kept turns). Baseline: keep only the newest turns within the same token share. The last
line of stdout is a JSON object. Target (issue 14): answer retention >= 0.75 at <= 25% of
the tokens, with under 5% of the summaries' sentences grammatical fragments (no verb, or a
dangling conjunction first: `memory.providers.sentences.is_fragment`), reported per
conversation in `fragments` and over all summaries in `fragment_share`.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import string
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory import banks, entries
from memory.compaction.apply import compact_partition
from memory.context import Context
from memory.models import Bank, BankCreate, BankUpdate, Entry, EntryIn
from memory.providers.sentences import is_fragment, sentences
from memory.settings import Settings
from memory.store.lance import LanceStore
from memory.testing import HashingEmbedder

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo"
PROMPT = (
    "Summarize this conversation history. Keep names, places, dates, numbers, events and "
    "plans verbatim; drop greetings and small talk."
)
T0 = datetime(2023, 1, 1, tzinfo=UTC)


def normalise(text: str) -> str:
    """Return text lowercased, whitespace collapsed, punctuation stripped at both ends."""
    return re.sub(r"\s+", " ", text.lower()).strip().strip(string.punctuation + " ")


def sessions(conversation: dict[str, Any]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """Yield (session number, turns) for each non-empty session, in order."""
    numbers = sorted(int(k.split("_")[1]) for k in conversation if re.fullmatch(r"session_\d+", k))
    for number in numbers:
        turns = conversation[f"session_{number}"]
        if turns:
            yield number, turns


def load_partitions(ctx: Context, bank: Bank, path: Path, per: str) -> list[str]:
    """Write one conversation's turns as entries; returns the partition keys used."""
    conversation = json.loads(path.read_text("utf-8"))
    items: list[EntryIn] = []
    keys: list[str] = []
    minute = 0
    for number, turns in sessions(conversation):
        key = f"{path.stem}" if per == "conversation" else f"{path.stem}-s{number}"
        if key not in keys:
            keys.append(key)
        for turn in turns:
            minute += 1
            items.append(
                EntryIn(
                    key=key,
                    speaker=turn["speaker"],
                    content=turn["text"],
                    created_at=T0 + timedelta(minutes=minute),
                )
            )
    entries.write(ctx, bank, items)
    return keys


def newest_share(thread: list[Entry], budget: int) -> list[Entry]:
    """Return the newest entries whose tokens fit in `budget` (the baseline)."""
    kept: list[Entry] = []
    used = 0
    for entry in reversed(thread):
        if used + entry.token_count > budget:
            break
        kept.append(entry)
        used += entry.token_count
    return list(reversed(kept))


def text_of(thread: list[Entry]) -> str:
    """Return a partition as the normalised text answers are looked up in."""
    return normalise(" ".join(f"{e.speaker}: {e.content}" for e in thread))


def run(data: Path, per: str, ratio: float) -> dict[str, Any]:
    """Return the figures for membank's compaction and the baseline over every file in data."""
    folder = Path(tempfile.mkdtemp(prefix="membank-quality-"))
    try:
        return _measure(data, per, ratio, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _measure(data: Path, per: str, ratio: float, folder: Path) -> dict[str, Any]:
    ctx = Context(
        store=LanceStore(str(folder / "db")),
        embedder=lambda mode: HashingEmbedder(mode.dims),
        settings=Settings(llm_model="membank/extractive"),
    )
    totals = {"before": 0, "after": 0, "baseline": 0, "answers": 0, "kept": 0, "base_kept": 0}
    seconds = 0.0
    fragments: dict[str, float] = {}
    all_sentences = all_fragments = 0
    files = sorted(data.glob("*.json"))
    for path in files:
        bank = banks.create(
            ctx, BankCreate(name=path.stem, type="conversation", compaction_prompt=PROMPT)
        )
        keys = load_partitions(ctx, bank, path, per)
        originals, compacted, baselines = [], [], []
        said: list[str] = []
        for key in keys:
            thread = entries.load(ctx, bank, key)
            tokens = sum(e.token_count for e in thread)
            target = int(tokens * ratio)
            bank = banks.update(ctx, bank.id, BankUpdate(max_tokens=target * 2))
            started = time.perf_counter()
            result = compact_partition(ctx, bank, key)
            seconds += time.perf_counter() - started
            assert result.status == "compacted", (key, result.status, result.error)
            after = entries.load(ctx, bank, key)
            said += [s for e in after if e.kind == "summary" for s in sentences(e.content)]
            baseline = newest_share(thread, target)
            totals["before"] += tokens
            totals["after"] += sum(e.token_count for e in after)
            totals["baseline"] += sum(e.token_count for e in baseline)
            originals.append(text_of(thread))
            compacted.append(text_of(after))
            baselines.append(text_of(baseline))
        broken = sum(map(is_fragment, said))
        fragments[path.stem] = round(broken / len(said), 4) if said else 0.0
        all_sentences += len(said)
        all_fragments += broken
        original, kept, base = " ".join(originals), " ".join(compacted), " ".join(baselines)
        for qa in json.loads(path.read_text("utf-8"))["qa"]:
            if qa.get("category") == 5 or "answer" not in qa:
                continue
            answer = normalise(str(qa["answer"]))
            if not answer or answer not in original:
                continue
            totals["answers"] += 1
            totals["kept"] += answer in kept
            totals["base_kept"] += answer in base
    answers = max(totals["answers"], 1)
    compression = totals["after"] / totals["before"]
    retention = totals["kept"] / answers
    return {
        "per": per,
        "files": len(files),
        "answers": totals["answers"],
        "tokens_before": totals["before"],
        "compression": round(compression, 4),
        "answer_retention": round(retention, 4),
        "baseline_compression": round(totals["baseline"] / totals["before"], 4),
        "baseline_answer_retention": round(totals["base_kept"] / answers, 4),
        "fragments": fragments,
        "fragment_share": round(all_fragments / max(all_sentences, 1), 4),
        "compaction_seconds": round(seconds, 2),
        "target_met": compression <= ratio
        and retention >= 0.75
        and all_fragments < 0.05 * max(all_sentences, 1),
    }


def main() -> None:
    """Run the benchmark and print its figures, the JSON line last."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--per", choices=["conversation", "session"], default="conversation")
    parser.add_argument("--ratio", type=float, default=0.25)
    args = parser.parse_args()
    figures = run(args.data, args.per, args.ratio)
    print(
        f"membank compaction ({figures['per']} partitions): {figures['compression']:.1%} of the "
        f"tokens kept, answer retention {figures['answer_retention']:.1%}; baseline (newest "
        f"turns only): {figures['baseline_compression']:.1%} of the tokens, answer retention "
        f"{figures['baseline_answer_retention']:.1%}"
    )
    print(f"fragments per conversation (share of summary sentences): {figures['fragments']}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
