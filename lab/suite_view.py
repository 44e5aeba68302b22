"""The Test compaction page's suite: the prompts over N cases for R rounds, with thresholds;
shows the same numbers as `membank test-compaction --suite` (one use case: ops.lab.run_suite)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import altair as alt
import streamlit as st

from lab import ui
from memory.errors import InvalidInput
from memory.judge import CRITERIA
from memory.ops import lab
from memory.prompt_lab.suite import SuiteRequest, SuiteResult

if TYPE_CHECKING:
    from memory.context import Context
    from memory.prompt_lab import Source


def suite_section(
    ctx: Context, source: Source | None, prompts: list[str], judge_model: str | None
) -> None:
    """Show the suite form (cases, rounds, target, thresholds) and the last suite's result."""
    st.subheader("Suite: the prompts over many cases and rounds")
    st.caption(
        "Bank entries: its N largest keys; pasted entries: their keys; synthetic: N seeds. "
        "Each round summarizes the carried summary plus its entries (summary of a summary)."
    )
    cols = st.columns(4)
    cases = int(cols[0].number_input("Cases", 1, 200, 10, key="suite_cases"))
    rounds = int(cols[1].number_input("Rounds", 1, 10, 3, key="suite_rounds"))
    target = cols[2].number_input("Target (% of the source)", 1, 100, 25, key="suite_target")
    rate = cols[3].number_input("Pass rate needed (%)", 0, 100, 100, key="suite_rate")
    given = st.text_input(
        "Thresholds (criterion=X, comma separated)",
        value="faithfulness=0.8, fact_coverage=0.5",
        key="suite_thresholds",
    )
    if st.button("Run suite", disabled=source is None or not prompts, key="suite_run"):
        assert source is not None
        st.session_state.pop("suite_result", None)
        with ui.reported(), st.spinner("Running the suite..."):
            request = SuiteRequest(
                source=source,
                prompts=prompts,
                cases=cases,
                rounds=rounds,
                target=target / 100,
                thresholds=thresholds(given),
                min_pass_rate=rate / 100,
            )
            st.session_state["suite_result"] = lab.run_suite(ctx, request, judge_model)
    result = st.session_state.get("suite_result")
    if result is not None:
        show_suite(result)


def thresholds(text: str) -> dict[str, float]:
    """Return `criterion=X, ...` as a dict (InvalidInput names a bad item)."""
    found: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        try:
            found[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise InvalidInput(f"threshold {item!r}: write criterion=X, e.g. faithfulness=0.8")
    return found


def show_suite(result: SuiteResult) -> None:
    """Show a suite: per prompt (pass rates, survival per round, cost), per case, a curve."""
    verdict = "passed" if result.passed else "FAILED"
    st.markdown(
        f"**Suite {verdict}**: {result.source_label}, {result.rounds} rounds, target "
        f"{result.target:.0%} · entry set fingerprint `{result.fingerprint}`"
    )
    for warning in result.warnings:
        st.warning(warning)
    st.table(
        [
            {
                "prompt": p.prompt,
                "pass rate": f"{p.pass_rate:.0%}",
                **{f"{k} pass": f"{v:.0%}" for k, v in p.criterion_pass.items()},
                "survival per round": " ".join(f"{v:.2f}" for v in p.survival),
                "tokens in/out": f"{p.tokens_in}/{p.tokens_out}",
                "seconds": f"{p.seconds:.1f}",
                "passed": "yes" if p.passed else "NO",
            }
            for p in result.prompts
        ]
    )
    points = [
        {"prompt": p.prompt[:40], "round": i + 1, "survival": v}
        for p in result.prompts
        for i, v in enumerate(p.survival)
    ]
    chart = (
        alt.Chart(alt.Data(values=points))
        .mark_line(point=True)
        .encode(
            x=alt.X("round:O", title="round"),
            y=alt.Y("survival:Q", title="facts surviving", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("prompt:N", legend=alt.Legend(orient="bottom", title=None)),
        )
        .properties(title="Fact survival per round", height=220)
    )
    st.altair_chart(chart, use_container_width=True)
    st.dataframe(
        [
            {
                "case": c.case,
                "prompt": c.prompt,
                "fingerprint": c.fingerprint,
                "survival": " ".join(f"{v:.2f}" for v in c.survival),
                **{k: c.scores.get(k) for k in CRITERIA},
                "pass": c.ok,
            }
            for c in result.cases
        ],
        hide_index=True,
        use_container_width=True,
    )
