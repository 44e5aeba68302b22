"""Compaction plans, pure: which partitions are over a threshold and which entries to fold.

The rule (SPEC "Compaction"): a partition (one key) is over its thresholds when its token sum
exceeds `max_tokens` or its entry count exceeds `max_turns` (0 or None disables a threshold;
none set = never compacts). Summaries count like any entry.

A compaction aims at TARGET_RATIO (half) of every set threshold, so the partition ends
clearly under them and does not trigger again on the next write:

- with a compaction prompt, the summary is reserved SUMMARY_SHARE of the token target
  (7/16 of `max_tokens`; DEFAULT_SUMMARY_TOKENS when only `max_turns` is set) and counts as
  one entry. The summary's share follows the share of the history it covers (nearly all
  of it: the partition is at `max_tokens`, twice the target, and the newest entries keep
  at most 1/16 of it), and it holds about twice the facts per token of verbatim turns
  (bench/RESULTS.md, issue 14 session 8); the newest entries keep the rest of the target,
  a floor of verbatim working context. (The model context of working memory is planned
  on its own, `memory.agents.turns.plan_context`);
- the newest entries are kept verbatim, newest first, while they fit in what the reserve
  leaves (tokens and turns); the first one that does not fit and everything older is
  covered: summarised together with any previous summary, or, with no prompt, deleted;
- the summary's budget is then the whole token target minus what the kept entries use
  (never less than its reserve), so room the newest entries leave unused goes to it;
- the newest entry is always kept verbatim, even when it alone exceeds what the target
  leaves: a write is never summarised (or deleted) by the compaction it triggered;
- a compaction must cover at least one entry that is not a summary. When it would not (the
  partition is only previous summaries and the newest entry, e.g. one entry over
  `max_tokens`), the plan is "none": the partition stays over its thresholds until more
  entries arrive, and every later check (inline or sweep) plans nothing again instead of
  re-summarising a summary alone. Such a partition still gets compacted by the next write
  that adds an older-than-newest entry to cover.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from memory.models import Bank, EntryKind

TARGET_RATIO = 0.5
"""A compacted partition ends at or under this share of each threshold."""
SUMMARY_SHARE = 0.875
"""Share of the token target reserved for the summary (so 7/16 of `max_tokens`); the newest
entries keep the rest (1/16 of `max_tokens`) as a floor of verbatim working context."""
DEFAULT_SUMMARY_TOKENS = 512
"""Summary budget when only `max_turns` is set."""
MIN_SUMMARY_TOKENS = 24
"""Smallest budget asked of a summarizer, whatever the thresholds."""
SUMMARY_SLACK = 2.0
"""A summary longer than this many times its budget is rejected as unusable output."""

Action = Literal["none", "summarize", "drop"]


@dataclass(frozen=True)
class PartitionRow:
    """What planning needs of one stored entry: no text, no vectors."""

    id: str
    kind: EntryKind
    token_count: int
    created_at: datetime


@dataclass(frozen=True)
class CompactionPlan:
    """What compacting one partition will do; `action == "none"` means nothing."""

    bank_id: str
    key: str
    action: Action
    reasons: tuple[str, ...]
    """Why the partition is over its thresholds, e.g. `max_turns: 12 > 10`."""
    covered: tuple[str, ...] = ()
    """Ids summarised (or deleted, with no prompt), oldest first; includes old summaries."""
    kept: tuple[str, ...] = ()
    """Ids kept verbatim, oldest first."""
    summary_budget: int = 0
    """Token budget of the summary (0 when there is no summary step)."""
    entries_before: int = 0
    tokens_before: int = 0
    kept_tokens: int = 0


def threshold_reasons(bank: Bank, entries: int, tokens: int) -> tuple[str, ...]:
    """Return why a partition of this size is over the bank's thresholds (empty: it is not)."""
    reasons: list[str] = []
    if bank.max_tokens and tokens > bank.max_tokens:
        reasons.append(f"max_tokens: {tokens} > {bank.max_tokens}")
    if bank.max_turns and entries > bank.max_turns:
        reasons.append(f"max_turns: {entries} > {bank.max_turns}")
    return tuple(reasons)


def summary_budget(bank: Bank) -> int:
    """Return the token budget reserved for a summary of this bank (a plan may give more)."""
    if bank.max_tokens:
        share = int(bank.max_tokens * TARGET_RATIO * SUMMARY_SHARE)
        return max(MIN_SUMMARY_TOKENS, share)
    return DEFAULT_SUMMARY_TOKENS


def _targets(bank: Bank, with_summary: bool, budget: int) -> tuple[int | None, int | None]:
    """Return the (tokens, turns) left for kept entries, None where unlimited."""
    tokens: int | None = None
    turns: int | None = None
    reserve_tokens = budget if with_summary else 0
    reserve_turns = 1 if with_summary else 0
    if bank.max_tokens:
        tokens = max(0, int(bank.max_tokens * TARGET_RATIO) - reserve_tokens)
    if bank.max_turns:
        turns = max(0, max(1, int(bank.max_turns * TARGET_RATIO)) - reserve_turns)
    return tokens, turns


def plan_partition(bank: Bank, key: str, rows: Sequence[PartitionRow]) -> CompactionPlan:
    """Return the compaction plan of one partition; `rows` are its entries, oldest first."""
    total = sum(row.token_count for row in rows)
    reasons = threshold_reasons(bank, len(rows), total)
    base = CompactionPlan(
        bank_id=bank.id,
        key=key,
        action="none",
        reasons=reasons,
        entries_before=len(rows),
        tokens_before=total,
    )
    if not reasons:
        return base
    with_summary = bank.compaction_prompt is not None and bank.compaction_prompt.strip() != ""
    budget = summary_budget(bank) if with_summary else 0
    token_room, turn_room = _targets(bank, with_summary, budget)
    kept_count = 0
    kept_tokens = 0
    for row in reversed(rows):
        newest = kept_count == 0 and row.kind != "summary"
        if not newest and turn_room is not None and kept_count + 1 > turn_room:
            break
        if not newest and token_room is not None and kept_tokens + row.token_count > token_room:
            break
        kept_count += 1
        kept_tokens += row.token_count
    split = len(rows) - kept_count
    if all(row.kind == "summary" for row in rows[:split]):
        return base  # nothing new to fold: covering only summaries would just rewrite them
    if with_summary and bank.max_tokens:
        budget = max(budget, int(bank.max_tokens * TARGET_RATIO) - kept_tokens)
    return CompactionPlan(
        bank_id=bank.id,
        key=key,
        action="summarize" if with_summary else "drop",
        reasons=reasons,
        covered=tuple(row.id for row in rows[:split]),
        kept=tuple(row.id for row in rows[split:]),
        summary_budget=budget,
        entries_before=len(rows),
        tokens_before=total,
        kept_tokens=kept_tokens,
    )
