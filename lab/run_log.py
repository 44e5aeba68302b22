"""The Test compaction page's run log: the saved runs of the entries' scope, the best prompt
of the entry set on screen (ranked within its fingerprint only), open a run, star or delete
it, export the runs as JSON or CSV, and diff two runs side by side (summaries with the
sentences only one has highlighted, per-criterion deltas, planted facts that moved)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from lab import ui
from lab.run_view import marked_html, show_run
from memory.ops import banks, lab_runs
from memory.prompt_lab.run_log import export_runs
from memory.prompt_lab.suite import fingerprint

if TYPE_CHECKING:
    from memory.context import Context
    from memory.models import Bank
    from memory.prompt_lab import TestRun

MOVED_TITLE = "Planted facts that moved"


def _label(run: TestRun) -> str:
    star = "★ " if run.starred else ""
    prompt = " ".join(run.prompt.split())
    prompt = prompt if len(prompt) <= 48 else prompt[:47] + "…"
    return (
        f"{star}{run.created_at:%Y-%m-%d %H:%M:%S} · {run.evaluation.overall:.2f} · {prompt} "
        f"· {run.id[:8]}"
    )


def run_log_section(ctx: Context, bank: Bank | None, result: list[TestRun] | None) -> None:
    """Show the run log of the page's scope: the bank's runs, or those on no bank."""
    st.subheader("Run log")
    state = st.session_state
    done = state.pop("log_done", None)
    if done:
        st.success(done)
    with ui.reported():
        if bank is not None:
            st.caption(f"Saved runs on the entries of {bank.name!r}.")
            saved = lab_runs.list_runs(ctx, bank=bank.id)
        else:  # runs on another bank's entries are not comparable with these
            st.caption("Saved runs on pasted or synthetic entries (no bank).")
            saved = [r for r in lab_runs.list_runs(ctx) if r.bank is None]
        if not saved:
            st.caption("No saved run yet.")
            return
        _best(saved, (result or saved)[0])
        if st.checkbox("Only starred runs", key="log_starred"):
            saved = [r for r in saved if r.starred] or saved
        _table(ctx, saved)
        left, right = st.columns(2)
        left.download_button(
            "Export JSON", export_runs(saved, "json"), file_name="lab-runs.json",
            mime="application/json", key="log_json",
        )  # fmt: skip
        right.download_button(
            "Export CSV", export_runs(saved, "csv"), file_name="lab-runs.csv",
            mime="text/csv", key="log_csv",
        )  # fmt: skip
        _open(ctx, saved)
        if len(saved) > 1:
            _diff(ctx, saved)


def _best(saved: list[TestRun], shown: TestRun) -> None:
    current = fingerprint(shown.original)
    same = [r for r in saved if fingerprint(r.original) == current]
    if same:  # runs on other entries are not comparable with these
        best = lab_runs.best_by_fingerprint(same)[current]
        st.success(
            f"Best prompt so far on these entries ({best.evaluation.overall:.2f}, "
            f"{len(same)} runs, fingerprint {current}): {best.prompt}"
        )


def _table(ctx: Context, saved: list[TestRun]) -> None:
    names = {b.id: b.name for b in banks.list_banks(ctx)}
    st.dataframe(
        [
            {
                "★": "★" if r.starred else "",
                "when": r.created_at,
                "score": round(r.evaluation.overall, 2),
                "prompt": r.prompt,
                "source": r.source_label,
                "bank": names.get(r.bank or "", "(create form)"),
                "judge": r.evaluation.judge,
                "fingerprint": fingerprint(r.original),
                "id": r.id[:8],
            }
            for r in saved
        ],
        hide_index=True,
        use_container_width=True,
    )


def _open(ctx: Context, saved: list[TestRun]) -> None:
    by_id = {r.id: r for r in saved}
    chosen = st.selectbox(
        "Open a saved run", list(by_id), index=None, placeholder="Choose a run to open",
        format_func=lambda i: _label(by_id[i]), key="log_open",
    )  # fmt: skip
    if chosen is None:  # the run just made is shown above; a saved one only when asked for
        return
    run = by_id[chosen]
    star, confirm, delete = st.columns(3)
    if star.button("Unstar" if run.starred else "Star", key="log_star"):
        lab_runs.star_run(ctx, run.id, starred=not run.starred)
        st.session_state["log_done"] = (
            f"{'Unstarred' if run.starred else 'Starred'} run {run.id[:8]}"
        )
        st.rerun()
    sure = confirm.checkbox("Delete it for good", key="log_sure")
    if delete.button("Delete run", disabled=not sure, key="log_delete"):
        lab_runs.delete_run(ctx, run.id)
        st.session_state.pop("log_sure", None)
        st.session_state["log_done"] = f"Deleted run {run.id[:8]}"
        st.rerun()
    with st.expander(f"Run {run.id[:8]}: {run.source_label}", expanded=False):
        show_run(run, key="log_")


def _diff(ctx: Context, saved: list[TestRun]) -> None:
    st.markdown("**Diff two runs**")
    by_id = {r.id: r for r in saved}
    ids = list(by_id)
    left, right = st.columns(2)
    first = left.selectbox(
        "First run", ids, index=1, format_func=lambda i: _label(by_id[i]), key="log_first"
    )
    second = right.selectbox(
        "Second run", ids, index=0, format_func=lambda i: _label(by_id[i]), key="log_second"
    )
    if first == second:
        st.caption("Choose two different runs to diff them.")
        return
    show_diff(lab_runs.diff(ctx, first, second))


def show_diff(diff: lab_runs.RunDiff) -> None:
    """Show a run diff: both summaries (sentences only one has highlighted), the score
    deltas, and the planted facts whose status moved."""
    if diff.same_entries:
        st.caption(
            f"Same entries (fingerprint {diff.fingerprints[0]}): the deltas compare prompts."
        )
    else:
        st.warning(
            f"These runs are on other entries (fingerprints {diff.fingerprints[0]} and "
            f"{diff.fingerprints[1]}): the deltas do not compare prompts."
        )
    sides = ((diff.first, diff.only_first, "First"), (diff.second, diff.only_second, "Second"))
    for column, (run, only, name) in zip(st.columns(2), sides, strict=True):
        with column:
            st.markdown(f"**{name}: {run.evaluation.overall:.2f}**")
            st.caption(f"prompt: {run.prompt} · {run.summarizer} · {run.evaluation.judge}")
            box = st.container(height=240, border=True, key=f"diff_{name.lower()}_{run.id}")
            box.markdown(marked_html(run.summary, only), unsafe_allow_html=True)
            st.caption(f"{len(only)} sentence(s) only in this summary, highlighted")
    st.table(
        [
            {
                "criterion": c.name,
                "first": "-" if c.first is None else f"{c.first:.2f}",
                "second": "-" if c.second is None else f"{c.second:.2f}",
                "delta": "-" if c.delta is None else f"{c.delta:+.2f}",
            }
            for c in diff.criteria
        ]
        + [
            {
                "criterion": "overall",
                "first": f"{diff.first.evaluation.overall:.2f}",
                "second": f"{diff.second.evaluation.overall:.2f}",
                "delta": f"{diff.overall_delta:+.2f}",
            }
        ]
    )
    if diff.moved:
        st.markdown(f"**{MOVED_TITLE}** ({len(diff.moved)})")
        st.table(
            [
                {
                    "fact": f"{m.fact.kind}: {m.fact.text} = {m.fact.value}",
                    "first": m.first,
                    "second": m.second,
                }
                for m in diff.moved
            ]
        )
    elif diff.first.fact_diff is not None or diff.second.fact_diff is not None:
        st.caption("No planted fact moved between kept, dropped and contradicted.")
