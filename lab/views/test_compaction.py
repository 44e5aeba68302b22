"""Test compaction: run the summarizer with a candidate prompt on bank, pasted or synthetic
entries, judge the summary, compare two prompts, suites, and the run log. Changes no bank."""

from __future__ import annotations

import streamlit as st

from lab import ui
from lab.run_log import run_log_section
from lab.run_view import show_evaluation, show_pair, show_run
from lab.suite_view import suite_section
from memory.errors import InvalidInput
from memory.judge import MAX_RUNS, OFFLINE_JUDGE
from memory.models import BankType
from memory.ops import lab
from memory.prompt_lab import BankSource, PastedSource, SyntheticSource, TestOptions

SOURCES = ["Bank entries", "Pasted entries", "Synthetic entries"]
TYPES: list[BankType] = ["conversation", "general"]
PASTE_HELP = (
    "One entry per line: `speaker: text` (conversation banks; `user:`, `assistant:` and "
    "`system:` set the role, `Dana (customer): text` a custom one), a plain line (general "
    'banks), or a JSON object such as {"key": "k1", "speaker": "ann", "content": "..."}.'
)
DEFAULT_PROMPT = "Summarize these entries. Keep names, numbers, dates and decisions."
DETERMINISTIC = (
    "The heuristic judge is deterministic: the same summary always gets the same scores, so "
    "it runs once (several runs, with a mean and spread, are offered for an LLM judge)."
)

st.title("Test compaction")
st.caption("Runs the compaction summarizer on entries held in memory: no bank is changed.")
ctx = ui.context()
state = st.session_state

draft_bank = state.pop("draft_bank", None)
if draft_bank is not None:
    state[ui.SELECTED_KEY] = draft_bank
    state["tc_source"] = SOURCES[0]
elif "draft_prompt" in state and "tc_source" not in state:
    state["tc_source"] = SOURCES[1]
kind = st.radio("Source", SOURCES, horizontal=True, key="tc_source")
bank = None
source: BankSource | PastedSource | SyntheticSource | None = None
if kind == SOURCES[0]:
    bank = ui.pick_bank(ctx)
    if bank is not None:
        key = st.text_input("Key (empty: the bank's largest partition)", key="tc_key")
        source = BankSource(bank=bank.id, key=key.strip() or None)
elif kind == SOURCES[1]:
    bank_type = st.selectbox(
        "Bank type", TYPES, index=TYPES.index(state.get("draft_type", "conversation")),
        key="tc_paste_type",
    )  # fmt: skip
    text = st.text_area("Entries (one per line)", height=180, help=PASTE_HELP, key="tc_pasted")
    if text.strip():
        source = PastedSource(text=text, bank_type=bank_type)
else:
    description = st.text_area(
        "Describe the entries to generate",
        placeholder="support chats about late deliveries and refunds",
        key="tc_description",
    )
    left, middle, right = st.columns(3)
    synth_type = left.selectbox("Bank type", TYPES, key="tc_synth_type")
    count = middle.number_input("Entries", min_value=2, max_value=200, value=20, key="tc_count")
    seed = right.number_input("Seed", min_value=0, value=0, key="tc_seed")
    if description.strip():
        source = SyntheticSource(
            description=description, bank_type=synth_type, count=int(count), seed=int(seed)
        )

origin = (kind, bank.id if bank is not None else None)
if state.get("tc_origin") != origin:
    # another bank or source: for a bank, its own prompt; nothing carries over from the last
    # one (the thresholds' widgets are keyed by the origin, below)
    if bank is not None or "tc_prompt" not in state:
        state["tc_prompt"] = (bank.compaction_prompt if bank else None) or DEFAULT_PROMPT
    state["tc_origin"] = origin
    st.rerun()  # the widgets are made afresh from the values just set
initial = state.pop("draft_prompt", None)
if initial:  # from the create form, a bank's configuration or the assistant
    state["tc_prompt"] = initial
prompt = st.text_area("Compaction prompt", key="tc_prompt")
with st.expander("Judge, thresholds and a second prompt"):
    judge_model = (
        st.text_input(
            "Judge model (any litellm name; empty: the heuristic judge, offline)", key="tc_judge"
        ).strip()
        or None
    )
    if judge_model is None or judge_model == OFFLINE_JUDGE:
        runs = 1
        st.caption(DETERMINISTIC)
    else:
        runs = int(st.number_input("Judge runs (mean and spread)", 1, MAX_RUNS, 1, key="tc_runs"))
    # one pair of widgets per bank or source: a widget's value lives in the browser too, so
    # clearing its state would not reset it there (a bank's 8,000 tokens stayed on a paste)
    max_tokens, max_turns = ui.threshold_inputs(
        f"tc_{SOURCES.index(kind)}_{bank.id if bank else 'entries'}",
        bank.max_tokens if bank else None,
        bank.max_turns if bank else None,
    )
    prompt_b = st.text_area("Prompt B (to compare with the prompt above)", key="tc_prompt_b")
options = {
    "max_tokens": max_tokens or None,
    "max_turns": max_turns or None,
    "judge_model": judge_model,
    "runs": runs,
}


def _request(chosen: str) -> lab.LabTest:
    """Return the test of the form's source with `chosen` prompt (checked: InvalidInput)."""
    assert source is not None
    return lab.LabTest(source=source, options=TestOptions(prompt=chosen, **options), save=True)


if source is not None:
    with ui.reported():
        cost = lab.preview(ctx, _request(prompt))
        st.caption(
            f"Cost preview: {cost.entries} entries, {cost.tokens:,} tokens, "
            f"{cost.judge_calls} judge call(s) · summarizer: {cost.summarizer} · "
            f"judge: {cost.judge}"
        )
run_col, compare_col = st.columns(2)
if run_col.button("Run test", type="primary", disabled=source is None, key="tc_run"):
    assert source is not None
    state.pop("tc_result", None)  # a failed run shows its error alone, not the last result
    with ui.reported(), st.status("Running the compaction test...", expanded=True) as status:
        done = lab.test_compaction(ctx, _request(prompt), progress=status.write)
        state["tc_result"] = [done]
        status.update(label="Compaction test done", state="complete", expanded=False)
if compare_col.button(
    "Compare with prompt B", disabled=source is None or not prompt_b.strip(), key="tc_compare"
):
    assert source is not None
    state.pop("tc_result", None)
    with ui.reported(), st.status("Running both prompts...", expanded=True) as status:
        first = _request(prompt)
        other = TestOptions.model_validate({**first.options.model_dump(), "prompt": prompt_b})
        pair = lab.compare(ctx, first, other, progress=status.write)
        state["tc_result"] = list(pair)
        status.update(label="Both prompts done", state="complete", expanded=False)

result = state.get("tc_result")
if result and len(result) == 1:
    show_run(result[0], title="Result")
elif result:
    show_pair(result)

st.divider()
suite_section(ctx, source, [p for p in (prompt, prompt_b) if p.strip()], judge_model)

st.divider()
st.subheader("Judge a summary you paste")
st.caption(
    "Scores your own summary against the source above (bank entries or pasted entries), "
    "with the prompt above and the judge chosen above, like `membank judge`."
)
own = st.text_area("Your summary", height=120, key="tc_own_summary")
if st.button("Judge this summary", disabled=not own.strip(), key="tc_judge_own"):
    state.pop("tc_own_result", None)
    with ui.reported():
        if isinstance(source, BankSource):
            ask = lab.JudgeRequest(
                summary=own, bank=source.bank, key=source.key, prompt=prompt,
                judge_model=judge_model, runs=runs,
            )  # fmt: skip
        elif isinstance(source, PastedSource):
            ask = lab.JudgeRequest(
                summary=own, pasted=source.text, bank_type=source.bank_type, prompt=prompt,
                judge_model=judge_model, runs=runs,
            )  # fmt: skip
        else:
            raise InvalidInput(
                "a pasted summary is judged against bank entries or pasted entries: choose "
                "one of those sources above"
            )
        state["tc_own_result"] = lab.judge(ctx, ask)
own_result = state.get("tc_own_result")
if own_result is not None and own.strip():
    show_evaluation(own_result)

st.divider()
run_log_section(ctx, bank, result)
