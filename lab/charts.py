"""Altair histograms from bins computed in the core, with avg / p95 / min / max marked."""

from __future__ import annotations

import altair as alt

from memory.stats import Distribution
from memory.stats_bins import Bin

MARKS = ("avg", "p95", "min", "max")
COLORS = ["#d62728", "#ff7f0e", "#2ca02c", "#9467bd"]


def histogram(bins: list[Bin], marks: Distribution, *, title: str, unit: str) -> alt.LayerChart:
    """Return a bar chart of `bins` with a rule per mark of the distribution."""
    bars = (
        alt.Chart(alt.Data(values=[b.model_dump() for b in bins]))
        .mark_bar(color="#4c78a8", opacity=0.8)
        .encode(
            x=alt.X("start:Q", title=unit, bin="binned"),
            x2="end:Q",
            y=alt.Y("count:Q", title="entries"),
            tooltip=["start:Q", "end:Q", "count:Q"],
        )
    )
    rows = [
        {"mark": name, "value": getattr(marks, name)}
        for name in MARKS
        if getattr(marks, name) is not None
    ]
    rules = (
        alt.Chart(alt.Data(values=rows))
        .mark_rule(strokeWidth=2, strokeDash=[4, 2])
        .encode(
            x="value:Q",
            color=alt.Color(
                "mark:N",
                scale=alt.Scale(domain=list(MARKS), range=COLORS),
                legend=alt.Legend(orient="bottom", title=None),
            ),
            tooltip=["mark:N", alt.Tooltip("value:Q", format=",.2f")],
        )
    )
    return alt.layer(bars, rules).properties(title=title, height=240)
