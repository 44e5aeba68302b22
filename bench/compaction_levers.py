"""Compaction retention levers on LoCoMo: each lever of issue 14 (session 8) switched in turn.

Usage: python bench/compaction_levers.py [--data DIR] [--ratio 0.25] [--only NAME ...]

Every row runs the current code with one setting changed in-process (module attributes,
nothing stored): the compaction split (`memory.compaction.plan.SUMMARY_SHARE`), the
extractive summarizer's knobs (`memory.providers.summary_pick.TUNING`: its defaults, among
them the top-up rounds and number words) and three rules measured but not kept (short reactions
ranked down, word-pair coverage, evaluative tails cut from a clause). Columns:
bench/compaction_quality.py (tokens kept, answer retention, fragment share),
bench/summarizer_probe.py at the same ratio per conversation,
per session and rolling, and for the split rows `inline`: a live bank that is written one
session at a time with `max_tokens` = ratio x the conversation's tokens, compacting inline
after each write as a real bank would (it ends between half the ratio and the ratio).
The last line of stdout is a JSON list of the rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import compaction_quality as quality
import summarizer_probe as probe

from memory import banks, entries
from memory.compaction import plan
from memory.context import Context
from memory.models import BankCreate, BankUpdate, EntryIn
from memory.providers import sentences, summarize, summary_pick
from memory.providers.tokens import count_tokens
from memory.settings import Settings
from memory.store.lance import LanceStore
from memory.testing import HashingEmbedder

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’]*")


@contextmanager
def setting(module: Any, name: str, value: Any) -> Iterator[None]:
    """Set module.name to value for the block."""
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def tuning(**changes: Any) -> Callable[[], Any]:
    """Return a lever that replaces fields of the summarizer's Tuning."""
    return lambda: setting(
        summary_pick, "TUNING", dataclasses.replace(summary_pick.TUNING, **changes)
    )


def _short_reaction(text: str) -> bool:
    """Return whether a clause is short (<= 6 words) with no I/we, number or name."""
    words = _WORD.findall(text)
    lower = {w.lower().replace("’", "'") for w in words}
    return (
        0 < len(words) <= 6
        and not lower & sentences._FIRST_PERSON
        and not any(sentences.is_number(w) or (i and w[0].isupper()) for i, w in enumerate(words))
    )


@contextmanager
def reactions_down(factor: float = 0.5) -> Iterator[None]:
    """Rank short reactions ("Looks delish!") down by factor (measured, not kept)."""
    original = summary_pick.unit_value

    def value(unit: summary_pick.Unit, covered: Any, *args: Any) -> float:
        scale = factor if _short_reaction(unit.text) else 1.0
        return original(unit, covered, *args) * scale

    with setting(summary_pick, "unit_value", value):
        yield


@contextmanager
def word_pairs(beta: float) -> Iterator[None]:
    """Count adjacent content-word pairs as words of weight beta x IDF (measured, not kept)."""
    units, weights = summarize._units, summarize.word_weights

    def paired(*args: Any, **kwargs: Any) -> list[summary_pick.Unit]:
        found = units(*args, **kwargs)
        for unit in found:
            seq = unit.sequence
            pairs = {f"{a}_{b}" for a, b in itertools.pairwise(seq) if a != b}
            unit.words = tuple(sorted(set(unit.words) | pairs))
        return found

    def weighted(found: Any, *args: Any) -> dict[str, float]:
        return {w: v * (beta if "_" in w else 1.0) for w, v in weights(found, *args).items()}

    with setting(summarize, "_units", paired), setting(summarize, "word_weights", weighted):
        yield


_TAIL = re.compile(r"(?:,|\s[-–—])\s+(?P<tail>[^,;:.!?\-–—]+)(?P<end>[.!?]*)$")


@contextmanager
def tails_cut() -> Iterator[None]:
    """Cut a clause's last piece when it is only stopwords and evaluations (", which is
    pretty exciting!", "- exciting!") and the rest still stands alone (measured, not kept)."""
    original = summarize._compress

    def compress(clause: str, names: frozenset[str]) -> str:
        text = original(clause, names)
        match = _TAIL.search(text)
        if match is None:
            return text
        words = [w.lower().replace("’", "'") for w in _WORD.findall(match["tail"])]
        head = text[: match.start()].rstrip(" ,-–—") + match["end"]
        if words and set(words) <= summarize._STOPWORDS and not sentences.is_fragment(head):
            return head
        return text

    with setting(summarize, "_compress", compress):
        yield


LEVERS: dict[str, tuple[Callable[[], Any], bool]] = {
    # name: (context manager factory, also run the inline bank)
    "current": (lambda: setting(plan, "SUMMARY_SHARE", plan.SUMMARY_SHARE), True),
    "split 0.5 (old)": (lambda: setting(plan, "SUMMARY_SHARE", 0.5), True),
    "split 0.625": (lambda: setting(plan, "SUMMARY_SHARE", 0.625), False),
    "split 0.75": (lambda: setting(plan, "SUMMARY_SHARE", 0.75), True),
    "split 0.9375": (lambda: setting(plan, "SUMMARY_SHARE", 0.9375), False),
    "no addressed rule": (tuning(addressed=1.0), False),
    "decay 0.6 (old)": (tuning(decay=0.6), False),
    "decay 0.8": (tuning(decay=0.8), False),
    "decay 1.0": (tuning(decay=1.0), False),
    "no top-up": (tuning(top_up_rounds=0), False),
    "no number words": (tuning(number_words=False), False),
    "+ short reactions x0.5": (reactions_down, False),
    "+ word pairs 0.25": (lambda: word_pairs(0.25), False),
    "+ evaluative tails cut": (tails_cut, False),
}


def inline(data: Path, ratio: float) -> dict[str, float]:
    """Return tokens kept and answer retention of live banks compacting after each write."""
    folder = Path(tempfile.mkdtemp(prefix="membank-levers-"))
    ctx = Context(
        store=LanceStore(str(folder / "db")),
        embedder=lambda mode: HashingEmbedder(mode.dims),
        settings=Settings(llm_model="membank/extractive"),
    )
    before = after = answers = kept = 0
    try:
        for path in sorted(data.glob("*.json")):
            conversation = json.loads(path.read_text("utf-8"))
            groups = list(quality.sessions(conversation))
            lines = [f"{t['speaker']}: {t['text']}" for _, turns in groups for t in turns]
            tokens = sum(count_tokens(line) for line in lines)
            create = BankCreate(
                name=path.stem, type="conversation", compaction_prompt=quality.PROMPT
            )
            bank = banks.create(ctx, create)
            bank = banks.update(ctx, bank.id, BankUpdate(max_tokens=int(tokens * ratio)))
            minute = 0
            for _, turns in groups:
                items = []
                for turn in turns:
                    minute += 1
                    at = quality.T0 + timedelta(minutes=minute)
                    items.append(
                        EntryIn(
                            key="k", speaker=turn["speaker"], content=turn["text"], created_at=at
                        )
                    )
                entries.write(ctx, bank, items)
            thread = entries.load(ctx, bank, "k")
            before += tokens
            after += sum(e.token_count for e in thread)
            original, compacted = quality.normalise(" ".join(lines)), quality.text_of(thread)
            for qa in conversation["qa"]:
                answer = quality.normalise(str(qa.get("answer", "")))
                if qa.get("category") != 5 and answer and answer in original:
                    answers += 1
                    kept += answer in compacted
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {"tokens": round(after / before, 4), "retention": round(kept / max(answers, 1), 4)}


def measure(data: Path, ratio: float, name: str) -> dict[str, Any]:
    """Return one row: the figures with lever `name` applied."""
    factory, live = LEVERS[name]
    with factory():
        figures = quality.run(data, "conversation", ratio)
        row: dict[str, Any] = {
            "lever": name,
            "tokens": figures["compression"],
            "retention": figures["answer_retention"],
            "fragments": figures["fragment_share"],
        }
        for per in ("conversation", "session", "rolling"):
            row[f"probe_{per}"] = probe.run(data, ratio, per)["retention"]
        if live:
            row["inline"] = inline(data, ratio)
    return row


def main() -> None:
    """Print one line per lever, then the JSON list of rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=quality.DEFAULT_DATA)
    parser.add_argument("--ratio", type=float, default=0.25)
    parser.add_argument("--only", nargs="*", choices=list(LEVERS), default=None)
    args = parser.parse_args()
    rows = []
    for name in args.only or list(LEVERS):
        row = measure(args.data, args.ratio, name)
        rows.append(row)
        print(" | ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
