"""Where a compaction test's entries come from: a bank (read only), pasted text, or synthetic
entries with planted facts. One partition (key) is tested, as compaction works per key."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from memory import banks, entries
from memory.errors import InvalidInput
from memory.models import Bank, Entry
from memory.ports import Completer
from memory.prompt_lab.pasted import draft_bank, parse_pasted
from memory.prompt_lab.records import BankSource, DraftEntry, PastedSource, PlantedFact, Source
from memory.prompt_lab.synthetic import TEMPLATE_GENERATOR_LABEL, SyntheticSet, template_set
from memory.prompt_lab.synthetic_llm import llm_set
from memory.providers import completer_for, describe, is_offline
from memory.providers.tokens import count_tokens
from memory.validation import as_utc

if TYPE_CHECKING:
    from memory.context import Context
    from memory.prompt_lab.records import SyntheticSource
    from memory.settings import Settings


@dataclass(frozen=True)
class Loaded:
    """The entries of one partition, in memory, with what they came from."""

    bank: Bank
    """The stored bank (bank source) or an in-memory draft bank, never written."""
    stored: bool
    entries: list[Entry]
    """Oldest first; ids are the stored ones, or `draft-N`."""
    facts: list[PlantedFact] | None
    label: str


def llm_for(settings: Settings) -> Completer | None:
    """Return the settings' LLM, which writes synthetic entries and proposes configurations;
    None for an offline `membank/` one (the template generator, the rule-based assistant).

    Raises:
        InvalidInput: the model is blank.
    """
    return None if is_offline(settings.llm_model) else completer_for(settings)


def generator_label(generator: Completer | None) -> str:
    """Return what will write synthetic entries: the template generator or the LLM."""
    return TEMPLATE_GENERATOR_LABEL if generator is None else describe(generator.model)


def synthesize(source: SyntheticSource, generator: Completer | None = None) -> SyntheticSet:
    """Return synthetic entries: written by `generator`, or offline from templates (None).

    Raises:
        InvalidInput: a blank description or a count out of range.
        ProviderError: the model failed or its entries are unusable.
    """
    if generator is None:
        return template_set(source)
    return llm_set(source, generator)


def load(
    ctx: Context, source: Source, bank: Bank | None = None, generator: Completer | None = None
) -> Loaded:
    """Return the entries a test of `source` runs on; a bank is only read.

    `bank` is a bank source's bank when the caller resolved it already (the ops layer
    does, once); None resolves it here. `generator` writes synthetic entries (None: the
    offline templates).

    Raises:
        InvalidInput: nothing to test (no entries, or fewer than two), or bad pasted text.
        NotFound: an unknown bank.
        ProviderError: the synthetic generator's model failed or replied unusably.
    """
    if isinstance(source, BankSource):
        return _from_bank(ctx, bank or banks.get(ctx, source.bank), source.key)
    if isinstance(source, PastedSource):
        drafts = parse_pasted(source.text, source.bank_type)
        return _from_drafts(ctx, drafts, draft_bank(source.bank_type), None, "pasted entries")
    made = synthesize(source, generator)
    label = f"{len(made.entries)} synthetic entries ({made.generator})"
    return _from_drafts(ctx, made.entries, draft_bank(source.bank_type), made.facts, label)


def _from_bank(ctx: Context, bank: Bank, key: str | None) -> Loaded:
    if key is not None:
        found = entries.load(ctx, bank, key)
        if not found:
            raise InvalidInput(
                f"bank {bank.name!r} has no entries under key {key!r}: nothing to test"
            )
        return Loaded(bank, True, found, None, f"bank {bank.name}, key {key}")
    largest = largest_partition(ctx, bank)
    if largest is None:
        raise InvalidInput(f"bank {bank.name!r} has no entries: write some, or paste entries")
    key, keys = largest
    where = f"bank {bank.name}, key {key}"
    if keys > 1:
        where += f" (the largest of its {keys} keys; --key picks another)"
    return Loaded(bank, True, entries.load(ctx, bank, key), None, where)


def largest_partition(ctx: Context, bank: Bank) -> tuple[str, int] | None:
    """Return the key with the most tokens (then entries, then the greater key) and how many
    keys the bank has, from one two-column scan (no entry is loaded); None for no entries."""
    sizes = ctx.store.partition_sizes(bank.id)
    return (sizes[0].key, len(sizes)) if sizes else None


def _largest(every: Sequence[Entry]) -> tuple[str, list[Entry], int]:
    """Return the key with the most tokens, its entries, and how many keys there are, for
    pasted or synthetic entries (already in memory); a stored bank asks its store instead
    (`largest_partition`, one two-column scan), in the same order."""
    parts: dict[str, list[Entry]] = {}
    for entry in every:
        parts.setdefault(entry.key, []).append(entry)
    key = max(parts, key=lambda k: (sum(e.token_count for e in parts[k]), len(parts[k]), k))
    return key, parts[key], len(parts)


def _from_drafts(
    ctx: Context,
    drafts: Sequence[DraftEntry],
    bank: Bank,
    facts: list[PlantedFact] | None,
    label: str,
) -> Loaded:
    key, part, keys = _largest(as_entries(ctx, drafts, bank))
    if keys > 1:
        label += f", key {key} (the largest of {keys} keys)"
    return Loaded(bank, False, part, facts, label)


def as_entries(ctx: Context, drafts: Sequence[DraftEntry], bank: Bank) -> list[Entry]:
    """Return drafts as in-memory entries; undated ones a second apart, ending now."""
    now = ctx.clock.now()
    out: list[Entry] = []
    for index, draft in enumerate(drafts):
        given = draft.created_at
        when = (
            as_utc(given, "created_at") if given else now - timedelta(seconds=len(drafts) - index)
        )
        out.append(
            Entry(
                id=f"draft-{index + 1}",
                bank_id=bank.id,
                key=draft.key,
                content=draft.content,
                speaker=draft.speaker,
                role=draft.role,
                created_at=when,
                token_count=count_tokens(draft.content),
            )
        )
    return sorted(out, key=lambda e: e.created_at)


def as_draft(entry: Entry) -> DraftEntry:
    """Return an entry as the draft a test run shows."""
    return DraftEntry(
        key=entry.key,
        content=entry.content,
        speaker=entry.speaker,
        role=entry.role,
        created_at=entry.created_at,
    )
