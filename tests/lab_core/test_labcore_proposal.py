"""Testing an assistant's proposal: on the bank's own entries when it holds two or more,
else on entries made up from the description; the bank is never changed."""

from __future__ import annotations

from compaction_support import make_bank, write_turns

from memory import banks
from memory.assistant import propose
from memory.context import Context
from memory.ops import lab
from memory.testing import ScriptedCompleter

DESCRIPTION = "customer support, about 50 messages per day per customer"


def test_a_proposal_for_a_bank_with_entries_is_tested_on_them(ctx: Context) -> None:
    bank = make_bank(ctx)
    write_turns(ctx, bank, "c-1", 4)
    record = banks.get(ctx, bank.id)
    completer = ScriptedCompleter().enqueue("Orders #1000 to #1002.")
    ctx.completer = lambda: completer
    proposal = propose(DESCRIPTION, bank_type="conversation")

    request = lab.ProposalTest(proposal=proposal, description=DESCRIPTION, bank=bank.name)
    run = lab.test_proposal(ctx, request)

    assert run.bank == bank.id and run.source_label == "bank chat, key c-1"
    assert run.prompt == proposal.compaction_prompt
    assert banks.get(ctx, bank.id) == record


def test_a_proposal_for_a_new_or_empty_bank_is_tested_on_synthetic_entries(ctx: Context) -> None:
    bank = make_bank(ctx)
    write_turns(ctx, bank, "c-1", 1)
    proposal = propose(DESCRIPTION, bank_type="conversation")

    for target in (None, bank.id):
        request = lab.ProposalTest(proposal=proposal, description=DESCRIPTION, bank=target)
        run = lab.test_proposal(ctx, request)

        assert run.bank is None and run.fact_diff is not None
        assert "synthetic entries" in run.source_label
