"""JSONL ingest throughput with the default embedder vs the embedder alone on the same texts.

Usage: python bench/ingest.py [--rows 1000] [--repeat 2] [--mode balanced]

A JSONL file of support-chat turns (mostly one or two sentences, a few short paragraphs)
is ingested into a fresh conversation bank with `memory.transfer.ingest.ingest` and the mode's
default offline embedder (MiniLM int8, ONNX). The baseline embeds exactly the texts the
ingest embedded (recorded during the run), in the same batch sizes, with the same embedder
instance: everything else ingest does (reading, per-row validation, chunking, stable ids,
duplicate checks, writing) is the difference. Runs alternate; best of each. Target: ingest
throughput at least 0.8x the embedder's. The last line of stdout is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory import banks
from memory.config import Mode, get_mode
from memory.context import Context
from memory.models import BankCreate
from memory.ports import Embedder, Vectors
from memory.providers.embed import embedder_for
from memory.store.lance import LanceStore
from memory.transfer.ingest import ingest

PHRASES = [
    "my order {n} has not arrived yet",
    "the grinder makes a rattling noise when it starts",
    "can you change the delivery address to my office",
    "the refund for invoice {n} is still missing",
    "firmware {n} broke the milk frother heating",
    "please cancel the subscription before it renews",
    "the warranty covers repairs until next March",
    "I would like to return the descaling kit",
]


class Recorder:
    """Wraps an embedder, recording every batch of texts it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dims = inner.dims
        self.batches: list[list[str]] = []

    def for_mode(self, mode: Mode) -> Embedder:
        """Return this recorder as the embedder of any mode (Context.embedder)."""
        return self

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Record the texts, then embed them with the wrapped embedder."""
        self.batches.append(list(texts))
        return self.inner.embed(texts)


def write_input(path: Path, rows: int, seed: int = 3) -> None:
    """Write `rows` chat turns as JSONL: mostly one or two sentences, a few longer notes."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(rows):
            size = rng.choices([1, 2, 4, 12], weights=[60, 25, 13, 2])[0]
            text = ". ".join(
                rng.choice(PHRASES).format(n=rng.randint(1000, 9999)) for _ in range(size)
            )
            record = {
                "key": f"ticket-{i // 12}",
                "speaker": "customer" if i % 2 == 0 else "support",
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"{text}.",
                "tags": ["support"],
            }
            out.write(json.dumps(record) + "\n")


def main() -> None:
    """Time ingest and the bare embedder on the same texts, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--mode", default="balanced")
    args = parser.parse_args()
    mode: Mode = get_mode(args.mode)
    folder = Path(tempfile.mkdtemp(prefix="membank-bench-ingest-"))
    try:
        source = folder / "turns.jsonl"
        write_input(source, args.rows)
        embedder = embedder_for(mode.embedder, mode.dims)
        embedder.embed(["warm up the model"])
        ingest_times, embed_times, chunks = [], [], 0
        for run in range(args.repeat):
            recorder = Recorder(embedder)
            store = LanceStore(str(folder / f"db{run}"))
            ctx = Context(store=store, embedder=recorder.for_mode)
            bank = banks.create(ctx, BankCreate(name="bench", type="conversation", mode=mode.name))
            started = time.perf_counter()
            report = ingest(ctx, bank, [source])
            ingest_times.append(time.perf_counter() - started)
            assert report.stored == args.rows and report.rejected == 0
            started = time.perf_counter()
            for texts in recorder.batches:
                embedder.embed(texts)
            embed_times.append(time.perf_counter() - started)
            chunks = sum(len(b) for b in recorder.batches)
        ours, base = min(ingest_times), min(embed_times)
        ratio = base / ours
        print(f"{args.rows:,} rows ({chunks:,} chunks embedded), mode {mode.name}, {embedder.name}")
        print(f"embedder alone on the same texts (baseline): {args.rows / base:,.0f} rows/s")
        print(f"membank ingest (read, validate, embed, write): {args.rows / ours:,.0f} rows/s")
        print(f"ingest throughput / embedder throughput: {ratio:.2f} (target >= 0.8)")
        figures = {
            "rows": args.rows,
            "chunks": chunks,
            "embed_rows_per_s": round(args.rows / base, 1),
            "ingest_rows_per_s": round(args.rows / ours, 1),
            "ratio": round(ratio, 2),
            "target_met": ratio >= 0.8,
        }
        print(json.dumps(figures))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
