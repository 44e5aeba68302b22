"""AI assistant: describe the bank, see the proposed configuration and why, Accept or Discard.

Nothing changes until Accept. After a proposal, one click tests its compaction prompt."""

from __future__ import annotations

import streamlit as st

from lab import ui
from lab.run_view import plain, show_run
from memory.assistant import Proposal
from memory.models import BankType
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
if proposal is not None:
    st.subheader("Proposal")
    st.caption(f"Proposed by {proposal.assistant}")
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
    target_id = state.get("as_for")
    accept_col, discard_col, test_col = st.columns(3)
    label = "Accept (apply to the bank)" if target_id else "Accept (fill the create form)"
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
                st.switch_page("pages/banks.py")
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
