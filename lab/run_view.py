"""How a compaction test run is shown: original / summary / surviving side by side, the
evaluation per criterion with reasons, and the planted-fact diff. Labels come from the run."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl
import streamlit as st

if TYPE_CHECKING:
    from memory.judge import Evaluation
    from memory.judge.records import Agreement
    from memory.prompt_lab import DraftEntry, FactDiff, TestRun
    from memory.prompt_lab.records import RecallProbe

CONTRADICTED = "#ffc9c9"
"""Highlight of what a summary said against a planted fact."""
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~$])")


def plain(text: str) -> str:
    """Return `text` escaped so markdown shows it as written."""
    return _MARKDOWN.sub(r"\\\1", text).replace("\n", "  \n")


def marked_html(text: str, marked: Sequence[str], colour: str = "#fff3a3") -> str:
    """Return `text` as HTML (escaped, line breaks kept) with each of `marked` (a sentence,
    compared with its whitespace folded) highlighted."""
    shown = html.escape(text)
    for phrase in sorted(set(marked), key=len, reverse=True):
        words = [re.escape(html.escape(w)) for w in phrase.split()]
        if words:
            shown = re.sub(
                r"\s+".join(words),
                lambda m: f'<mark style="background:{colour}">{m.group(0)}</mark>',
                shown,
                count=1,
            )
    return shown.replace("\n", "<br>")


def entries_list(drafts: Sequence[DraftEntry], *, height: int = 320, key: str) -> None:
    """Show entries one per line, `speaker (role): text`, in a scrolling box."""
    box = st.container(height=height, border=True, key=key)
    if not drafts:
        box.caption("(none)")
    for draft in drafts:
        who = draft.speaker or draft.key
        if draft.role and draft.role != draft.speaker:
            who += f" ({draft.role})"
        box.markdown(f"**{plain(who)}**: {plain(draft.content)}")


def show_run(run: TestRun, *, title: str | None = None, key: str = "") -> None:
    """Show one run in full (`key`: a prefix of its boxes' keys, to show it twice)."""
    if title:
        st.subheader(title)
    st.caption(f"Source: {run.source_label} · prompt: {run.prompt}")
    left, middle, right = st.columns(3)
    with left:
        st.markdown(f"**Original entries** ({len(run.original)})")
        entries_list(run.original, key=f"{key}original_{run.id}")
    with middle:
        st.markdown("**Summary**")
        st.caption(run.summarizer)
        box = st.container(height=320, border=True, key=f"{key}summary_{run.id}")
        said = run.fact_diff.said if run.fact_diff is not None else []
        box.markdown(marked_html(run.summary, said, CONTRADICTED), unsafe_allow_html=True)
        if said:
            st.caption("Highlighted: what the summary said against a planted fact.")
        show_following(run)
    with right:
        st.markdown(f"**Surviving entries** ({len(run.surviving)})")
        entries_list(run.surviving, key=f"{key}surviving_{run.id}")
    show_evaluation(run.evaluation, budget_warning=run.budget_warning())
    if run.fact_diff is not None:
        show_fact_diff(run.fact_diff)
    if run.probe is not None:
        show_probe(run.probe)


def show_probe(probe: RecallProbe) -> None:
    """Show the recall probe: its one line, then each question and the summary's answer."""
    st.markdown("**Recall probe**")
    st.caption(probe.line() + " (offline: each question answered by the best-matching sentence)")
    rows = [
        {
            "question": a.question,
            "planted": a.value,
            "summary's answer": a.summary_answer or "(no sentence matches)",
            "from summary": "yes" if a.from_summary else "no",
            "from history": "yes" if a.from_history else "no",
        }
        for a in probe.answers
    ]
    if rows:
        st.dataframe(pl.DataFrame(rows), hide_index=True)


FOLLOWING_TITLE = "How the offline extractive stand-in followed the prompt"
_MARKS = {
    "followed": "✓",
    "partly followed": "≈",
    "cannot follow offline": "✗",
    "not read offline": "–",
}


def show_following(run: TestRun) -> None:
    """Show, for a run of the offline summarizer, each instruction of the prompt and
    whether it was followed, cannot be followed offline, or is read only by an LLM."""
    if not run.following:
        return
    with st.expander(FOLLOWING_TITLE, expanded=True):
        st.caption(
            "The offline extractive summarizer is a stand-in for an LLM: it acts on the "
            "prompt's checkable instructions only."
        )
        for note in run.following:
            mark = _MARKS[note.status]
            st.markdown(
                f"{mark} **{plain(note.instruction)}**: {note.status} · {plain(note.detail)}"
            )


def show_evaluation(evaluation: Evaluation, *, budget_warning: str | None = None) -> None:
    """Show the judge's scores: overall, per criterion with its reason, and its flags; warn
    when the run's budget was at least the source (or, with no budget known, the summary is
    as long as the source)."""
    st.markdown("**Evaluation**")
    st.caption(f"Scored by {evaluation.judge}")
    cards = st.columns(4)
    cards[0].metric("Overall score", f"{evaluation.overall:.2f}")
    cards[1].metric("Compression ratio", f"{evaluation.compression_ratio:.2f}")
    cards[2].metric("Judge runs", evaluation.runs)
    cards[3].metric("Judge cost (tokens)", f"{evaluation.cost_tokens:,}")
    rows = []
    for criterion in evaluation.criteria:
        row = {
            "criterion": criterion.name,
            "score": "n/a" if criterion.error else f"{criterion.score:.2f}",
            "reason": criterion.error or criterion.reason,
        }
        if evaluation.runs > 1:
            row["spread"] = f"{criterion.spread:.2f}"
        rows.append(row)
    st.table(pl.DataFrame(rows))  # plain (no index): long reasons wrap, text is selectable
    if evaluation.runs > 1:
        show_runs_chart(evaluation)
    if evaluation.agreement is not None:
        show_agreement(evaluation.agreement)
    if budget_warning is not None:
        st.warning(budget_warning)
    elif evaluation.compression_ratio >= 1:
        st.warning(
            f"The summary is {evaluation.compression_ratio:.0%} of the source: the budget is at "
            "least the source, so nothing had to be dropped and the scores say little. Lower "
            "the max size (or run a suite, which targets 25% of the source)."
        )
    show_flags(evaluation.flags)


def show_runs_chart(evaluation: Evaluation) -> None:
    """Show each criterion's score per judge run as a small bar chart (runs > 1)."""
    judged = [c for c in evaluation.criteria if c.error is None and c.scores]
    if not judged:
        return
    st.caption(f"Scores per judge run ({evaluation.runs} runs)")
    runs = max(len(c.scores) for c in judged)
    frame = pl.DataFrame(
        {"run": [str(n + 1) for n in range(runs)]}
        | {c.name: c.scores + [None] * (runs - len(c.scores)) for c in judged}
    )
    st.bar_chart(frame, x="run", stack=False, height=180)


def show_agreement(agreement: Agreement) -> None:
    """Show the heuristic judge's scores beside the LLM judge's, and their agreement."""
    st.caption(
        f"Agreement of the heuristic judge with the LLM judge: {agreement.agreement:.2f} "
        f"(mean gap {agreement.mean_gap:.2f} over {len(agreement.criteria)} criteria)"
    )
    st.table(
        pl.DataFrame(
            {
                "criterion": agreement.criteria,
                "LLM judge": [f"{v:.2f}" for v in agreement.llm],
                "heuristic judge": [f"{v:.2f}" for v in agreement.heuristic],
            }
        )
    )


MAX_FLAGS = 10
"""Flags listed in the one warning box; the rest are counted (a long paste raises hundreds)."""


def show_flags(flags: Sequence[str]) -> None:
    """Show the judge's flags in one warning box, the first MAX_FLAGS listed, the rest counted."""
    if not flags:
        return
    listed = "\n".join(f"- {plain(flag)}" for flag in flags[:MAX_FLAGS])
    more = len(flags) - MAX_FLAGS
    tail = f"\n\n… and {more} more (all in the run's JSON export)" if more > 0 else ""
    st.warning(f"The judge raised {len(flags)} flag(s):\n{listed}{tail}")


def show_fact_diff(diff: FactDiff) -> None:
    """Show which planted facts the summary and surviving entries kept, dropped, contradicted."""
    st.markdown("**Planted facts**")
    columns = st.columns(3)
    for column, (name, facts) in zip(
        columns,
        (("Kept", diff.kept), ("Dropped", diff.dropped), ("Contradicted", diff.contradicted)),
        strict=True,
    ):
        column.markdown(f"{name} ({len(facts)})")
        for fact in facts:
            update = f" (updated from {fact.previous})" if fact.previous else ""
            column.caption(f"{fact.kind}: {fact.text} = {fact.value}{update}")
            said = diff.said_of(fact)
            if said:
                column.markdown(
                    f"said: {marked_html(said, [said], CONTRADICTED)}", unsafe_allow_html=True
                )


def show_pair(runs: Sequence[TestRun]) -> None:
    """Show two runs of the same entries side by side: summary and scores of each prompt."""
    st.markdown(f"**Original entries** ({len(runs[0].original)})")
    entries_list(runs[0].original, height=220, key=f"original_{runs[0].id}")
    for column, run, name in zip(st.columns(2), runs, ("Prompt A", "Prompt B"), strict=True):
        with column:
            st.subheader(f"{name}: {run.evaluation.overall:.2f}")
            st.caption(f"prompt: {run.prompt}")
            st.caption(run.summarizer)
            box = st.container(height=220, border=True, key=f"summary_{run.id}")
            box.markdown(plain(run.summary))
            show_following(run)
            show_evaluation(run.evaluation, budget_warning=run.budget_warning())
            if run.fact_diff is not None:
                show_fact_diff(run.fact_diff)
