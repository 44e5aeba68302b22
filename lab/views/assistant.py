"""AI assistant: describe the bank, see the proposed configuration and why, Accept or Discard.

Nothing changes until Accept. After a proposal, one click tests its compaction prompt."""

from __future__ import annotations

import streamlit as st

from lab import ui
from lab.run_view import plain, show_run
from memory.assistant import Proposal
from memory.models import Bank, BankType
from memory.ops import lab

NEW, EXISTING = "A new bank", "An existing bank"
TYPES: list[BankType | None] = [None, "conversation", "general"]

st.title("AI assistant")
ctx = ui.context()
state = st.session_state
description = st.text_area(
    "Describe what the bank will hold",
    placeholder="stores daily customer interactions, about 50 messages per day per customer",
    key="as_description",
)
target = st.radio("For", [NEW, EXISTING], horizontal=True, key="as_target")
bank = None
bank_type: BankType | None = None
if target == EXISTING:
    bank = ui.pick_bank(ctx)
    bank_type = bank.type if bank is not None else None
else:
    bank_type = st.selectbox(
        "Bank type", TYPES, format_func=lambda t: t or "let the assistant choose", key="as_type"
    )

if st.button("Propose", type="primary", disabled=not description.strip(), key="as_propose"):
    with ui.reported(), st.spinner("Thinking about a configuration..."):
        asked = (
            lab.ProposeRequest(description=description, bank=bank.id)
            if bank is not None
            else lab.ProposeRequest(description=description, type=bank_type)
        )
        state["as_proposal"] = lab.propose(ctx, asked)
        state["as_for"] = bank.id if bank is not None else None
        state.pop("as_test", None)

proposal: Proposal | None = state.get("as_proposal")
message = state.pop("as_message", None)
if message:
    st.success(message)


def show_changes(current: Bank, proposal: Proposal) -> None:
    """Show the bank's settings before and after Accept, and warn when retention shrinks."""
    rows = [
        ("compaction prompt", current.compaction_prompt, proposal.compaction_prompt),
        ("max size (tokens)", current.max_tokens, proposal.max_tokens),
        ("max turns", current.max_turns, proposal.max_turns),
        ("retention", ui.retention_text(current.retention_days),
         ui.retention_text(proposal.retention_days)),
        ("mode (fixed at creation)", current.mode, current.mode),
    ]  # fmt: skip
    st.markdown(f"**Changes to {current.name!r} on Accept**")
    st.table(
        [
            {
                "setting": name,
                "now": str(now or "off"),
                "after accept": str(after or "off"),
                "changes": "yes" if now != after else "",
            }
            for name, now, after in rows
        ]
    )
    before, after = current.retention_days, proposal.retention_days
    if after is not None and (before is None or after < before):
        st.warning(
            f"Retention shrinks from {ui.retention_text(before)} to {ui.retention_text(after)}: "
            "older entries are deleted for good at the next retention run."
        )


if proposal is not None:
    st.subheader("Proposal")
    mode = f" · mode {proposal.mode}" if proposal.mode else ""
    st.caption(f"Proposed by {proposal.assistant}{mode}")
    cards = st.columns(4)
    cards[0].metric("Bank type", proposal.bank_type)
    cards[1].metric(
        "Max size (tokens)", f"{proposal.max_tokens:,}" if proposal.max_tokens else "off"
    )
    cards[2].metric("Max turns", f"{proposal.max_turns:,}" if proposal.max_turns else "off")
    cards[3].metric("Retention", ui.retention_text(proposal.retention_days))
    st.markdown("**Compaction prompt**")
    st.markdown(f"> {plain(proposal.compaction_prompt)}")
    st.markdown("**Why**")
    st.markdown("\n".join(f"- {plain(line)}" for line in proposal.rationale))
    # Accept applies to the bank on screen now, whichever bank was selected at Propose time
    target_id = bank.id if bank is not None else None
    proposed_for = state.get("as_for")
    if bank is not None:
        if proposed_for is not None and proposed_for != bank.id:
            st.warning(
                f"This proposal was made for another bank; Accept applies it to the bank "
                f"shown, {bank.name!r}."
            )
        show_changes(bank, proposal)
    accept_col, discard_col, test_col = st.columns(3)
    label = (
        f"Accept (apply to {bank.name!r})" if bank is not None else "Accept (fill the create form)"
    )
    if accept_col.button(label, type="primary", key="as_accept"):
        with ui.reported():
            if target_id:
                applied = lab.accept(ctx, target_id, proposal)
                state["as_message"] = f"Applied the proposal to bank {applied.name!r}."
                state.pop("as_proposal", None)
                st.rerun()
            else:
                state["assistant_draft"] = proposal
                state.pop("as_proposal", None)
                st.switch_page("views/banks.py")
    if discard_col.button("Discard", key="as_discard"):
        state.pop("as_proposal", None)
        state.pop("as_test", None)
        state["as_message"] = "Discarded the proposal: nothing was changed."
        st.rerun()
    if test_col.button("Test this prompt", key="as_test_prompt"):
        # the bank's own entries when it has some to compact, else entries made up from
        # the description (with planted facts, so the diff shows what the prompt keeps)
        test = lab.ProposalTest(proposal=proposal, description=description, bank=target_id)
        with ui.reported(), st.status("Testing the proposed prompt...", expanded=True) as status:
            state["as_test"] = lab.test_proposal(ctx, test, progress=status.write)
            status.update(label="Test done", state="complete", expanded=False)
    tested = state.get("as_test")
    if tested is not None:
        show_run(tested, title="Test of the proposed prompt")
