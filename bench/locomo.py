"""LoCoMo turn-level retrieval recall of membank's search (hybrid default, BM25, vector).

Usage: python bench/locomo.py [--data DIR] [--mode balanced] [--k 20]

Every conversation file `*.json` directly in DIR (the LoCoMo format, see
../shared/bench/locomo/README.md) is indexed into one conversation bank of a fresh LanceDB
in a temporary folder, keyed by the conversation (the file name): one entry per turn, as a
real user's write would hold it: the turn's text as the content, its speaker as the
speaker, its session's date (`session_N_date_time`) as `created_at`, and its `dia_id` in
the metadata (read back only to score). Nothing from the questions or the evidence is
indexed, and nothing else is added to the text (image captions are left out: they are not
what the speakers said). Embeddings come from the real offline default embedder of the mode.

Each question with evidence (category 5, adversarial, excluded) is searched with
`memory.search.search` restricted to its conversation's key, top 20, with the default
minimum score (`--min-score` overrides it). Recall@k = share of the
question's evidence dia_ids among the dia_ids of the top-k entries, averaged over questions
(the LoCoMo evaluation's measure). Evidence strings are parsed with `D<session>:<turn>`
(so "D8:6; D9:17" is two ids and "D:11:26" is D11:26); an id that names no turn stays in
the denominator. The same run repeats the search with `method="fts"` (BM25 only) and
`method="vector"` (vector only) as baselines.

The last line of stdout is a JSON object:
`{"recall@5", "recall@10", "recall@20", "fts": {...}, "vector": {...}, "questions": n, ...}`;
each method's object holds its recall@5/10/20, recall@5/10/20 by category, p50 and p95 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from memory import banks, entries, search
from memory.context import Context
from memory.models import BankCreate, EntryIn, SearchMethod, SearchQuery
from memory.store.lance import LanceStore

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo"
CUTOFFS = (5, 10, 20)
METHODS: tuple[SearchMethod, ...] = ("hybrid", "fts", "vector")
_SESSION = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
WRITE_BATCH = 500


@dataclass(frozen=True)
class Question:
    """One LoCoMo question with evidence, in the conversation `key`."""

    key: str
    text: str
    evidence: frozenset[str]
    category: int


def evidence_ids(raw: list[Any]) -> frozenset[str]:
    """Return the dia_ids named in a question's evidence strings, normalised to `D<s>:<t>`."""
    found: set[str] = set()
    for item in raw:
        found.update(f"D{s}:{t}" for s, t in _DIA_ID.findall(str(item)))
    return frozenset(found)


def load_conversation(path: Path) -> tuple[list[EntryIn], list[Question]]:
    """Return a conversation file's turns as entries (key = file stem) and its questions."""
    data = json.loads(path.read_text(encoding="utf-8"))
    key = path.stem
    sessions = sorted(
        (int(m.group(1)), value)
        for name, value in data.items()
        if (m := _SESSION.fullmatch(name)) and isinstance(value, list)
    )
    turns = [
        EntryIn(
            key=key,
            content=turn["text"],
            speaker=turn["speaker"],
            created_at=session_date(data.get(f"session_{number}_date_time")),
            metadata={"dia_id": turn["dia_id"], "session": number},
        )
        for number, session in sessions
        for turn in session
        if str(turn.get("text", "")).strip()
    ]
    questions = []
    for qa in data.get("qa", []):
        evidence = evidence_ids(qa.get("evidence") or [])
        if qa.get("category") == 5 or not evidence:
            continue
        questions.append(Question(key, qa["question"], evidence, int(qa["category"])))
    return turns, questions


def session_date(raw: Any) -> datetime | None:
    """Return a session's `date_time` ("1:56 pm on 8 May, 2023") as UTC, None if unreadable."""
    try:
        return datetime.strptime(str(raw), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def recall_at(found: list[str], evidence: frozenset[str], k: int) -> float:
    """Return the share of `evidence` among the first `k` retrieved dia_ids."""
    return len(evidence & set(found[:k])) / len(evidence)


def evaluate(
    ctx: Context,
    bank: Any,
    questions: list[Question],
    method: SearchMethod,
    k: int,
    min_score: float | None = None,
) -> dict[str, Any]:
    """Return mean recall at each cutoff, per-category recall and latency for one method."""
    recalls: dict[int, list[float]] = {c: [] for c in CUTOFFS if c <= k}
    by_category: dict[int, dict[int, list[float]]] = {c: {} for c in recalls}
    latencies: list[float] = []
    for question in questions:
        query = SearchQuery(
            text=question.text, k=k, key=question.key, method=method, min_score=min_score
        )
        started = time.perf_counter()
        hits = search.search(ctx, bank, query)
        latencies.append(time.perf_counter() - started)
        found = [str(hit.entry.metadata.get("dia_id")) for hit in hits]
        for cutoff, values in recalls.items():
            values.append(recall := recall_at(found, question.evidence, cutoff))
            by_category[cutoff].setdefault(question.category, []).append(recall)
    result: dict[str, Any] = {
        f"recall@{c}": round(statistics.fmean(v), 4) for c, v in recalls.items()
    }
    for cutoff, groups in by_category.items():
        result[f"recall@{cutoff}_by_category"] = {
            str(c): round(statistics.fmean(v), 4) for c, v in sorted(groups.items())
        }
    latencies.sort()
    result["p50_ms"] = round(1000 * latencies[len(latencies) // 2], 2)
    result["p95_ms"] = round(
        1000 * latencies[min(len(latencies) - 1, len(latencies) * 95 // 100)], 2
    )
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and print the figures; returns the final JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of *.json")
    parser.add_argument("--mode", default="balanced", help="bank mode (embedder, chunks)")
    parser.add_argument("--k", type=int, default=20, help="hits per search")
    parser.add_argument("--min-score", type=float, default=None, help="default: the search's")
    args = parser.parse_args(argv)

    files = sorted(p for p in args.data.glob("*.json") if p.is_file())
    if not files:
        parser.error(f"no *.json conversation files directly in {args.data}")
    with tempfile.TemporaryDirectory(prefix="membank-locomo-") as tmp:
        ctx = Context(store=LanceStore(str(Path(tmp) / "db")), account="bench")
        bank = banks.create(ctx, BankCreate(name="locomo", type="conversation", mode=args.mode))
        questions: list[Question] = []
        turns = 0
        started = time.perf_counter()
        for path in files:
            items, asked = load_conversation(path)
            for start in range(0, len(items), WRITE_BATCH):
                entries.write(ctx, bank, items[start : start + WRITE_BATCH])
            turns += len(items)
            questions.extend(asked)
        index_s = time.perf_counter() - started
        print(
            f"indexed {turns} turns of {len(files)} conversations in {index_s:.1f} s "
            f"(mode {args.mode}); {len(questions)} questions (category 5 excluded)"
        )
        results = {m: evaluate(ctx, bank, questions, m, args.k, args.min_score) for m in METHODS}

    head = " ".join(f"{'R@' + str(c):>7}" for c in CUTOFFS)
    print(f"{'method':<8} {head}   p50 ms   p95 ms")
    for method, figures in results.items():
        cells = " ".join(f"{figures.get(f'recall@{c}', float('nan')):>7.4f}" for c in CUTOFFS)
        print(f"{method:<8} {cells}   {figures['p50_ms']:>6.1f}   {figures['p95_ms']:>6.1f}")
    for method, figures in results.items():
        print(f"{method} recall@10 by category: {figures['recall@10_by_category']}")
    hybrid = results["hybrid"]
    final: dict[str, Any] = {f"recall@{c}": hybrid.get(f"recall@{c}") for c in CUTOFFS}
    final["fts"] = results["fts"]
    final["vector"] = results["vector"]
    final["hybrid"] = hybrid
    final["questions"] = len(questions)
    final["turns"] = turns
    final["conversations"] = len(files)
    print(json.dumps(final))
    return final


if __name__ == "__main__":
    main()
