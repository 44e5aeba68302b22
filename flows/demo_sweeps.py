"""The compaction and retention step of `membank demo`: inline compaction, both sweeps as
Prefect flow runs, and what they did.

With no PREFECT_API_URL set, Prefect runs the flows on a temporary local server.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from uuid import UUID

from flows.tasks import table_lines
from memory.context import Context
from memory.errors import MembankError, NotFound
from memory.models import Bank, BankCreate, BankUpdate, Entry, EntryIn
from memory.ops import banks, entries

Step = Callable[[str, Any], None]
PROMPT = (
    "Summarize this support conversation. Keep the customer's issues, case numbers, "
    "dates, amounts and commitments; drop greetings."
)
TURNS = [
    ("Dana", "user", "Hi, my espresso machine order #88213 arrived with a cracked water tank."),
    ("Support", "assistant", "Sorry, Dana. Is it the Breva 3 you ordered on 2 March 2026?"),
    ("Dana", "user", "Yes, the Breva 3, 349 euros, delivered to my office in Rotterdam."),
    ("Support", "assistant", "I opened replacement case RC-5521 for a new water tank."),
    ("Dana", "user", "How long will the replacement take?"),
    ("Support", "assistant", "The tank ships within 5 working days by DHL; tracking by e-mail."),
    ("Dana", "user", "Can I keep using the machine until then?"),
    ("Support", "assistant", "Please don't: a cracked tank can leak onto the heating element."),
    ("Dana", "user", "OK. Also, the milk frother rattles since Monday."),
    ("Support", "assistant", "The frother is under the 2-year warranty; I added it to RC-5521."),
    ("Dana", "user", "Great. Please send everything to the office, not my home."),
    ("Support", "assistant", "Noted: delivery to the Rotterdam office, Weena 505."),
    ("Dana", "user", "Thanks, that's all for now."),
    ("Support", "assistant", "Case RC-5521 stays open until both parts have arrived."),
]
STARTUP_SECONDS = 180
NAMES = ("demo-working-memory", "demo-meeting-notes", "demo-session-scratch")
SERIES = ("weekly-sync", "launch-review")
"""The meeting series (keys) of the compaction sweep's bank."""


def run_compaction_demo(ctx: Context, uri: str, step: Step) -> None:
    """Show inline compaction, then run the compaction and retention sweeps as flows."""
    for name in NAMES:
        with contextlib.suppress(NotFound):
            banks.delete(ctx, name)
    _inline(ctx, step)
    _prepare_sweeps(ctx, step)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # offline: no telemetry
    from prefect.settings import (
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS,
        temporary_settings,
    )

    from flows.compaction_sweep import compaction_sweep
    from flows.retention_sweep import retention_sweep

    # a busy laptop can take longer than Prefect's default 20 s to start the temporary server
    with temporary_settings({PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS: STARTUP_SECONDS}):
        try:
            runs = [
                _flow_run(
                    compaction_sweep(data=uri, return_state=True), "membank-compaction-sweep"
                ),
                _flow_run(retention_sweep(data=uri, return_state=True), "membank-retention-sweep"),
            ]
        except RuntimeError as exc:  # Prefect: API not reachable, temporary server timed out
            raise MembankError(_prefect_unreachable(exc)) from exc
    notes = banks.get(ctx, NAMES[1])
    lines = [line for run in runs for line in run]
    left = sum(len(_thread(ctx, notes, series)) for series in SERIES)
    lines.append(f"{notes.name} after the sweep: {left} entries, {notes.summary_count} summaries")
    step("Prefect flow runs (hourly compaction sweep, daily retention sweep)", lines)


def _prefect_unreachable(exc: RuntimeError) -> str:
    """Return the one-line reason the demo's flows could not run, and what to do."""
    api = os.environ.get("PREFECT_API_URL")
    if api:
        return (
            f"the Prefect API at {api} is not reachable ({exc}): start `membank serve` "
            "or unset PREFECT_API_URL to let the demo start a temporary server"
        )
    return (
        f"Prefect's temporary server did not start ({exc}): the machine may be too busy; "
        "run `membank demo` again, or start `membank serve` and set PREFECT_API_URL"
    )


def _thread(ctx: Context, bank: Bank, key: str) -> list[Entry]:
    """Return the bank's entries under `key`, oldest first."""
    return entries.load(ctx, entries.LoadRequest(bank=bank.id, key=key)).entries


def _write(ctx: Context, bank: Bank, items: list[EntryIn]) -> None:
    """Write the items (the write compacts the partitions over a threshold)."""
    entries.write(ctx, entries.WriteRequest(bank=bank.id, items=items))


def _inline(ctx: Context, step: Step) -> None:
    spec = BankCreate(
        name=NAMES[0],
        type="conversation",
        compaction_prompt=PROMPT,
        max_turns=8,
        max_tokens=300,
    )
    bank = banks.create(ctx, banks.CreateBank(spec))
    for speaker, role, text in TURNS:
        item = EntryIn(key="dana-session", speaker=speaker, role=role, content=text)
        _write(ctx, bank, [item])  # compaction runs inline after each write
    thread = _thread(ctx, bank, "dana-session")
    stored = banks.get(ctx, bank.id)
    summaries = [e for e in thread if e.kind == "summary"]
    if not summaries:  # the configured summary model failed: every entry was kept
        step(
            "inline compaction after each write",
            [
                f"no summary: the summary model {ctx.settings.llm_model!r} failed on every "
                f"try, so all {len(thread)} entries were kept (the next write or sweep "
                "retries); unset MEMBANK_LLM_MODEL to use the offline extractive summarizer",
            ],
        )
        return
    (summary,) = summaries
    tokens = sum(e.token_count for e in thread)
    lines = [
        f"{len(TURNS)} turns written one by one into a bank with max_turns 8, max_tokens 300; "
        f"{len(thread)} entries ({tokens} tokens) left, summary count "
        f"{stored.summary_count}, last compaction {stored.last_compaction_at:%H:%M:%S}",
        f"summary by {summary.metadata.get('summarizer')}, {summary.token_count} tokens, "
        f"replacing {len(summary.summary_of)} entries (earlier summaries carried forward):",
        *[f"  {line}" for line in summary.content.splitlines()],
        "kept verbatim:",
        *[f"  {e.speaker}: {e.content}" for e in thread if e.kind != "summary"],
    ]
    step("inline compaction after each write (offline extractive summarizer)", lines)


def _prepare_sweeps(ctx: Context, step: Step) -> None:
    notes = banks.create(
        ctx,
        banks.CreateBank(BankCreate(name=NAMES[1], type="conversation", compaction_prompt=PROMPT)),
    )
    for series in SERIES:
        items = [
            EntryIn(key=series, speaker=s, content=f"[{series}] {t}") for s, _, t in TURNS[:10]
        ]
        _write(ctx, notes, items)
    banks.update(ctx, banks.UpdateBank(notes.name, BankUpdate(max_turns=6)))
    scratch = banks.create(
        ctx,
        banks.CreateBank(BankCreate(name=NAMES[2], type="conversation", retention_days=7)),
    )
    old = ctx.clock.now() - timedelta(days=10)
    history = [
        EntryIn(key="s1", speaker=s, content=t, created_at=old + timedelta(minutes=i))
        for i, (s, _, t) in enumerate(TURNS[:5])
    ]
    _write(ctx, scratch, history)
    _write(ctx, scratch, [EntryIn(key="s1", speaker="Dana", content="New session.")])
    step(
        "banks for the sweeps",
        [
            f"{notes.name}: 2 meeting series of 10 entries, max_turns lowered to 6 afterwards",
            f"{scratch.name}: retention 7 days, 5 entries from 10 days ago and 1 new",
        ],
    )


def _flow_run(state: Any, artifact_key: str) -> list[str]:
    """Return lines describing a finished flow run and the artifact it published."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterKey,
        FlowRunFilter,
        FlowRunFilterId,
    )

    run_id: UUID = state.state_details.flow_run_id
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(run_id)
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[artifact_key])),
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id])),
        )
    seconds = run.total_run_time.total_seconds()
    lines = [f"flow run {run.name!r} of {artifact_key}: {state.name} in {seconds:.1f} s"]
    for artifact in found:
        lines.extend(f"  {line}" for line in table_lines(str(artifact.data)))
    return lines
