"""Apply compaction to one partition: summary first, journaled, so a crash never loses data.

The steps, under the partition's lock:

1. recover: a stored summary is the journal of its compaction. Any entry listed in a stored
   summary's `summary_of` that still exists is deleted now, never summarised again; a
   summary that duplicates another (a race between machines) is dropped when that loses
   nothing (`recovery_deletions`).
2. plan (pure, `plan.plan_partition`).
3. with a compaction prompt: summarise the covered entries (previous summaries included);
   any provider failure, timeout or unusable output stops here with nothing changed.
4. store the summary (`kind="summary"`, `summary_of` = covered ids) in one commit: from
   now on the compaction is journaled.
5. where the partition lock may not exclude another machine (object storage), check no
   other stored summary covers the same entries (a compaction elsewhere won the race): if
   one does, drop ours and delete nothing. On a local folder the lock excludes every
   other process, so there is no rival and no read.
6. delete the covered entries in one commit (`entry_id IN (...)`), prune old versions and
   record the bank's summary count and last compaction time (at once, or once per bank at
   the end of a sweep: `finish_bank`).

A process killed anywhere leaves every entry either present or covered by exactly one
summary; running compaction again finishes the job (step 1), the prune a kill interrupted
(`purge.finish`) and the bank's counters (`verify.repair_counters`: each summary
records when it was made; a drop, which leaves no summary, stamps the bank first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from memory import banks, entries, purge, verify
from memory.compaction.plan import (
    SUMMARY_SLACK,
    CompactionPlan,
    PartitionRow,
    plan_partition,
)
from memory.compaction.summarizer import completer_for, summarize, summarizer_label
from memory.errors import ProviderError
from memory.models import SUMMARY_SPEAKER, SUMMARY_TAG, Bank, Entry, EntryIn
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.context import Context

SUMMARY_ROLE = "system"
DEFAULT_WAIT_SECONDS = 120.0
"""How long on-demand and sweep compactions wait for a partition another process holds."""

Status = Literal[
    "compacted", "dropped", "under_threshold", "irreducible", "busy", "failed", "conflict"
]
"""`irreducible`: over a threshold, but only the newest entry and previous summaries are left
(see `plan`): nothing was done, and nothing will be until more entries arrive."""
STEPS = ("recovered", "planned", "summarized", "summary_stored", "deleted", "pruned", "saved")
"""Checkpoints passed to the fault-injection hook, in order."""

Checkpoint = Callable[[str], None]
"""Called with each step's name in STEPS as compaction passes it (fault injection in tests)."""


def _no_step(name: str) -> None:
    return None


@dataclass(frozen=True)
class _Run:
    """How this compaction runs: finish the bank now (prune, counters) or leave it to the
    caller, and its checkpoint."""

    finish: bool
    step: Checkpoint


class CompactionResult(BaseModel):
    """What compacting one partition did."""

    bank_id: str
    bank_name: str
    key: str
    status: Status
    reasons: list[str] = Field(default_factory=list)
    """Thresholds the partition was over (empty when it was under)."""
    covered: int = 0
    """Entries summarised (or deleted, with no prompt)."""
    kept: int = 0
    """Entries left as they were: the newest, kept verbatim, and with nothing compacted
    (under threshold, irreducible, failed, conflict) every entry of the partition."""
    recovered: int = 0
    """Entries deleted because an interrupted compaction had already summarised them."""
    summary_id: str | None = None
    summary: str | None = None
    summarizer: str | None = None
    """Label of what wrote the summary, e.g. `membank/extractive (extractive, no LLM)`."""
    error: str | None = None
    entries_before: int = 0
    tokens_before: int = 0
    entries_after: int = 0
    tokens_after: int = 0


def recovery_deletions(stored: Sequence[Entry]) -> set[str]:
    """Return the ids to delete so no entry is both kept and summarised, or summarised twice.

    Summaries are taken widest first; one that overlaps an earlier-taken summary is dropped
    when each of its covered entries is still present or covered by a taken summary (so
    nothing is lost). Every present entry a taken summary covers is deleted.
    """
    present = {entry.id for entry in stored}
    order = {entry.id: index for index, entry in enumerate(stored)}
    summaries = sorted(
        (e for e in stored if e.kind == "summary"),
        key=lambda s: (-len(s.summary_of), order[s.id]),
    )
    taken: set[str] = set()
    doomed: set[str] = set()
    for summary in summaries:
        cover = set(summary.summary_of)
        if cover & taken and cover <= present | taken:
            doomed.add(summary.id)
            continue
        taken |= cover
    return doomed | (taken & present)


def _delete(
    ctx: Context,
    bank: Bank,
    ids: Sequence[str],
    *,
    prune: bool = True,
    after: Callable[[], None] | None = None,
) -> None:
    """Delete every chunk of `ids` in one commit and (unless the caller will) prune;
    `after` runs between the delete and the prune."""
    purge.delete_final(
        ctx, bank, EntryFilter.of_ids(list(ids)), prune_now=prune, after_delete=after
    )


def _rows(stored: Sequence[Entry]) -> list[PartitionRow]:
    return [PartitionRow(e.id, e.kind, e.token_count, e.created_at) for e in stored]


def compact_partition(
    ctx: Context,
    bank: Bank,
    key: str,
    *,
    wait: float | None = DEFAULT_WAIT_SECONDS,
    finish: bool = True,
    checkpoint: Checkpoint | None = None,
) -> CompactionResult:
    """Compact one partition if it is over a threshold; returns what was done.

    Args:
        ctx: The context (store, completer, clock).
        bank: The bank holding the partition.
        key: The partition's key.
        wait: Seconds to wait for a partition another compaction holds (0: skip at once).
        finish: Prune old versions and store the bank's counters now; False when the caller
            does both once for the bank later (`finish_bank`, as the sweep does after all of
            a bank's partitions: a prune rewrites files, and a counters write is a registry
            commit that every worker of a sweep would otherwise make per partition).
        checkpoint: called at each step in STEPS (a test stops or races compaction there).

    Returns:
        The result; `status="failed"` (nothing changed) when the summary step failed.
    """
    with ctx.store.partition_lock(bank.id, key, timeout=wait) as held:
        if not held:
            return CompactionResult(
                bank_id=bank.id,
                bank_name=bank.name,
                key=key,
                status="busy",
                error="another compaction holds this partition",
            )
        return _compact_locked(ctx, bank, key, _Run(finish, checkpoint or _no_step))


def _compact_locked(ctx: Context, bank: Bank, key: str, run: _Run) -> CompactionResult:
    stored = entries.load(ctx, bank, key)
    doomed = recovery_deletions(stored)
    if doomed:
        _delete(ctx, bank, sorted(doomed), prune=run.finish)
        stored = [e for e in stored if e.id not in doomed]
    run.step("recovered")
    plan = plan_partition(bank, key, _rows(stored))
    run.step("planned")
    result = CompactionResult(
        bank_id=bank.id,
        bank_name=bank.name,
        key=key,
        status="irreducible" if plan.reasons else "under_threshold",
        reasons=list(plan.reasons),
        recovered=len(doomed),
        kept=plan.entries_before,
        entries_before=plan.entries_before,
        tokens_before=plan.tokens_before,
        entries_after=plan.entries_before,
        tokens_after=plan.tokens_before,
    )
    if plan.action == "none":
        if doomed:
            record_stats(ctx, bank)
        else:
            reconcile(ctx, bank, prune=run.finish)
        return result
    if plan.action == "drop":
        return _drop(ctx, bank, plan, result, run)
    return _summarize_and_replace(ctx, bank, plan, stored, result, run)


def _drop(
    ctx: Context, bank: Bank, plan: CompactionPlan, result: CompactionResult, run: _Run
) -> CompactionResult:
    _replace(ctx, bank, plan, run)
    return result.model_copy(
        update={
            "status": "dropped",
            "covered": len(plan.covered),
            "kept": len(plan.kept),
            "entries_after": len(plan.kept),
            "tokens_after": plan.kept_tokens,
        }
    )


def _replace(ctx: Context, bank: Bank, plan: CompactionPlan, run: _Run) -> None:
    """Delete the covered entries (one commit) and, unless the sweep will, prune and record
    the counters.

    A drop stores no summary, so nothing in the data says it ran: the bank's compaction time
    is saved before the delete, where a kill cannot lose it.
    """
    if plan.action == "drop":
        _stamp(ctx, bank)
    _delete(ctx, bank, plan.covered, prune=run.finish, after=lambda: run.step("deleted"))
    run.step("pruned")
    if run.finish:
        record_stats(ctx, bank)
    run.step("saved")


def _summarize_and_replace(
    ctx: Context,
    bank: Bank,
    plan: CompactionPlan,
    stored: Sequence[Entry],
    result: CompactionResult,
    run: _Run,
) -> CompactionResult:
    by_id = {e.id: e for e in stored}
    covered = [by_id[i] for i in plan.covered]
    kept = [by_id[i] for i in plan.kept]
    completer = completer_for(ctx)
    label = summarizer_label(completer.model)
    try:
        text = summarize(completer, bank, covered, plan.summary_budget, slack=SUMMARY_SLACK)
    except ProviderError as exc:
        return result.model_copy(
            update={"status": "failed", "error": str(exc), "summarizer": label}
        )
    run.step("summarized")
    summary = _store_summary(
        ctx, bank, plan, (covered, kept), text, (label, completer.model), prune=run.finish
    )
    run.step("summary_stored")
    if not ctx.store.partitions_exclusive and _lost_race(ctx, bank, summary):
        _delete(ctx, bank, [summary.id])
        return result.model_copy(
            update={"status": "conflict", "error": "another compaction summarised these first"}
        )
    _replace(ctx, bank, plan, run)
    return result.model_copy(
        update={
            "status": "compacted",
            "covered": len(covered),
            "kept": len(kept),
            "summary_id": summary.id,
            "summary": summary.content,
            "summarizer": label,
            "entries_after": len(kept) + 1,
            "tokens_after": plan.kept_tokens + summary.token_count,
        }
    )


def _store_summary(
    ctx: Context,
    bank: Bank,
    plan: CompactionPlan,
    parts: tuple[Sequence[Entry], Sequence[Entry]],
    text: str,
    made_by: tuple[str, str],
    *,
    prune: bool,
) -> Entry:
    """Write the summary of `parts` (covered, kept) dated like its oldest covered entry,
    sorted before the kept ones; `made_by` is the summarizer's (label, model).

    The summary holds that entry's information, so retention deletes it when that entry
    would have expired: nothing outlives the bank's retention inside a summary. It keeps
    the covered entries' tags, and their memory type when they share one. With `prune`
    False (a sweep, which prunes the bank once after), the write leaves the bank's
    deferred prune to the sweep.
    """
    covered, kept = parts
    label, model = made_by
    created_at = min(e.created_at for e in covered)
    if kept:
        created_at = min(created_at, kept[0].created_at - timedelta(microseconds=1))
    conversation = bank.type == "conversation"
    types = {e.memory_type for e in covered}
    item = EntryIn(
        key=plan.key,
        content=text,
        speaker=SUMMARY_SPEAKER if conversation else None,
        role=SUMMARY_ROLE if conversation else None,
        memory_type=types.pop() if len(types) == 1 else None,
        tags=list(dict.fromkeys([SUMMARY_TAG, *(tag for e in covered for tag in e.tags)])),
        metadata={
            "summarizer": label,
            "model": model,
            "covers": len(covered),
            "budget_tokens": plan.summary_budget,
            verify.COMPACTED_AT: ctx.clock.now().isoformat(),
            NEWEST_COVERED_AT: max(newest_fact_at(e) for e in covered).isoformat(),
        },
        created_at=created_at,
    )
    (summary,) = entries.write(
        ctx,
        bank,
        [item],
        kind="summary",
        summary_of=[lineage(covered)],
        finish_deletions=prune,
    )
    return summary


NEWEST_COVERED_AT = "newest_covered_at"
"""Summary metadata: when the newest entry it holds information of was written (a summary is
dated by its oldest, so retention may delete it while newer facts are inside the window)."""


def newest_fact_at(entry: Entry) -> datetime:
    """Return when the newest information an entry holds was written (a summary: the newest
    entry it covers, when recorded; otherwise its own date)."""
    recorded = entry.metadata.get(NEWEST_COVERED_AT) if entry.kind == "summary" else None
    if isinstance(recorded, str):
        try:
            return max(datetime.fromisoformat(recorded), entry.created_at)
        except ValueError:
            pass
    return entry.created_at


def lineage(covered: Sequence[Entry]) -> list[str]:
    """Return the ids a new summary replaces: the covered entries and, through any earlier
    summary among them, every entry that summary replaced (so re-ingest never revives them)."""
    ids = [e.id for e in covered]
    for entry in covered:
        if entry.kind == "summary":
            ids.extend(entry.summary_of)
    return list(dict.fromkeys(ids))


def _lost_race(ctx: Context, bank: Bank, summary: Entry) -> bool:
    """Return True when another stored summary covers some of the same entries.

    An earlier summary that this one replaces shares its lineage by design and is not a rival.
    """
    summaries = EntryFilter(keys=(summary.key,), kind="summary")
    mine = set(summary.summary_of)
    return any(
        other.id != summary.id and other.id not in mine and mine & set(other.summary_of)
        for other in entries.read(ctx, bank, summaries)
    )


def reconcile(ctx: Context, bank: Bank, *, prune: bool = True) -> bool:
    """Finish what an interrupted compaction left: a due prune, counters off from the data.

    With `prune=False` (inside a sweep, which prunes at its end) only the counters are fixed.
    Returns True when something had to be done.
    """
    pruned = prune and purge.finish(ctx, bank)
    return bool(verify.repair_counters(ctx, bank)) or pruned


def _stamp(ctx: Context, bank: Bank) -> None:
    """Save the bank's last compaction time as now (before a drop's delete)."""
    banks.update_counters(
        ctx.for_account(bank.account), bank.id, last_compaction_at=ctx.clock.now()
    )


def finish_bank(ctx: Context, bank: Bank) -> None:
    """Finish a bank after compacting its partitions with `finish=False` (the sweep): store
    its counters, then make the deletions final (one prune).

    Raises:
        PrunePending: the prune failed (the deletions stay marked, finished next time).
    """
    record_stats(ctx, bank)
    purge.prune(ctx, bank)


def record_stats(ctx: Context, bank: Bank) -> Bank:
    """Store the bank's current summary count and last compaction time (now, or the newest
    summary's own time if a clock elsewhere ran ahead of this one); returns the bank."""
    derived = verify.derived_counters(ctx, bank)
    now = ctx.clock.now()
    return banks.update_counters(
        ctx.for_account(bank.account),
        bank.id,
        summary_count=derived.summary_count,
        last_compaction_at=max(now, derived.last_compaction_at or now),
    )
