"""The main job on the embedded defaults (`membank demo`): banks, sample conversations,
search, load, forget; then ingest, stats and exports (`flows.demo_data`); then inline
compaction and both sweeps as Prefect flow runs (`flows.demo_sweeps`); then two conversations
of one user with one agent over the memory layers (`flows.demo_layers`).

Runs offline on the shipped MiniLM embedder in a local LanceDB folder and prints what it did.
"""

from __future__ import annotations

import contextlib
import json
import time
from importlib import resources
from typing import Any

from flows.demo_data import run_data_demo
from flows.demo_layers import run_layers_demo
from flows.demo_sweeps import run_compaction_demo
from memory.context import Context
from memory.errors import NotFound
from memory.models import Bank, BankCreate, EntryIn, SearchHit, SearchQuery
from memory.ops import banks, entries
from memory.wiring import open_context


def sample_data() -> dict[str, Any]:
    """Return the sample conversations, facts and queries shipped with membank."""
    text = resources.files("memory").joinpath("data/sample_conversations.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def run_demo(uri: str, *, as_json: bool = False) -> int:
    """Run the demo against the LanceDB folder `uri`, printing each step; returns 0."""
    started = time.perf_counter()
    ctx = open_context(uri)
    data = sample_data()
    report: dict[str, Any] = {"uri": uri, "steps": []}

    def step(title: str, detail: Any) -> None:
        report["steps"].append({"step": title, "detail": detail})
        if not as_json:
            print(f"\n== {title}")
            lines = detail if isinstance(detail, list) else [detail]
            for line in lines:
                print(f"   {line}")

    for name in ("support-history", "user-facts"):
        with contextlib.suppress(NotFound):
            banks.delete(ctx, name)
    support = banks.create(
        ctx, banks.CreateBank(BankCreate(name="support-history", template="customer-support"))
    )
    facts = banks.create(
        ctx, banks.CreateBank(BankCreate(name="user-facts", template="user-preferences"))
    )
    step(
        "created banks",
        [
            f"{b.name}: {b.type}, mode {b.mode}, retention "
            f"{f'{b.retention_days} days' if b.retention_days else 'indefinite'}, "
            f"max_turns {b.max_turns}"
            for b in (support, facts)
        ],
    )

    turns = [
        EntryIn(key=conv["key"], speaker=speaker, role=role, content=text)
        for conv in data["conversations"]
        for speaker, role, text in conv["turns"]
    ]
    written = entries.write(ctx, entries.WriteRequest(bank=support.id, items=turns)).entries
    notes = [
        EntryIn(key=key, memory_type=kind, content=text, tags=[kind])
        for key, kind, text in data["facts"]
    ]
    entries.write(ctx, entries.WriteRequest(bank=facts.id, items=notes))
    keys = sorted({t.key for t in turns})
    step(
        "wrote entries",
        [f"{len(written)} turns in {len(keys)} conversations", f"{len(notes)} facts"],
    )

    by_name = {"support-history": support, "user-facts": facts}
    results = []
    for bank_name, question in data["queries"]:
        hits = _search(ctx, by_name[bank_name], SearchQuery(text=question, k=2))
        results.append(f"[{bank_name}] {question!r}")
        results.extend(f"    {h.score:.3f} {h.entry.key}: {h.entry.content}" for h in hits)
    step("hybrid search (vector + full-text, offline MiniLM)", results)

    thread = entries.load(ctx, entries.LoadRequest(bank=support.id, key="customer-2077")).entries
    step("load thread customer-2077", [f"{e.speaker}: {e.content}" for e in thread])

    gone = entries.forget(ctx, entries.ForgetRequest(bank=support.id, entry_id=thread[0].id)).entry
    again = _search(ctx, support, SearchQuery(text="subscription renewed cancelled", k=5))
    still_there = any(h.entry.id == gone.id for h in again)
    step("forget one entry", f"forgot {gone.id}; found again by search: {still_there}")

    run_data_demo(ctx, uri, step)
    run_compaction_demo(ctx, uri, step)
    run_layers_demo(ctx, uri, step)

    report["seconds"] = round(time.perf_counter() - started, 2)
    if as_json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(f"\ndone in {report['seconds']} s; data in {uri}")
    return 0


def _search(ctx: Context, bank: Bank, query: SearchQuery) -> list[SearchHit]:
    """Return the bank's best hits for the query, best first."""
    return entries.search(ctx, entries.SearchRequest(bank=bank.id, query=query)).hits
