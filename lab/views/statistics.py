"""Statistics: a bank's entries as aggregates over a time frame (never individual entries)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import streamlit as st

from lab import ui
from lab.charts import histogram
from memory import stats
from memory.stats_bins import histograms

FRAMES = {"Last 7 days": 7, "Last 30 days": 30, "Last 90 days": 90, "Last 365 days": 365}
CUSTOM = "Custom range"


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


st.title("Statistics")
ctx = ui.context()
bank = ui.pick_bank(ctx)
if bank is None:
    st.stop()

frame = st.selectbox("Time frame", [*FRAMES, CUSTOM], index=1, key="stats_frame")
now = ctx.clock.now()
since: datetime | None
until: datetime | None = None
if frame == CUSTOM:
    today = now.astimezone(UTC).date()
    picked = st.date_input("From - to (inclusive)", (today - timedelta(days=30), today))
    if not isinstance(picked, tuple) or len(picked) != 2:
        st.info("Pick the last day of the range too.")
        st.stop()
    since = datetime.combine(picked[0], time(), UTC)
    until = datetime.combine(picked[1] + timedelta(days=1), time(), UTC)
else:
    since = now - timedelta(days=FRAMES[frame])

with ui.reported():
    found = stats.compute(ctx, bank, since=since, until=until)
    bins = histograms(ctx, bank, since=since, until=until)
    group = "conversations" if bank.type == "conversation" else "groups"
    first, last = found.first_entry_at, found.last_entry_at
    top = st.columns(3)
    top[0].metric("Total entries", f"{found.total_entries:,}")
    top[1].metric(f"Unique {group}", f"{found.unique_keys:,}")
    if found.unique_speakers is not None:
        top[2].metric("Unique speakers", f"{found.unique_speakers:,}")
    second = st.columns([2, 1])
    second[0].metric(
        "Date range",
        f"{first:%b %d} - {last:%b %d, %Y}" if first and last else "no entries",
        help=f"{first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC" if first and last else None,
    )
    second[1].metric("Compaction summaries", f"{found.summary_count:,}")
    if found.last_compaction_at:
        st.caption(f"Last compaction: {found.last_compaction_at:%Y-%m-%d %H:%M} UTC")
    st.caption(
        f"Storage: {found.entry_days:,.1f} entry-days in the frame "
        f"({found.avg_entries_held:,.1f} entries held per day; storage is billed per entry "
        "per day)."
    )

    charts = [
        ("Tokens per entry", bins.token_count, found.token_count, "tokens"),
        ("Entry age", bins.entry_age_days, found.entry_age_days, "days"),
        (f"Entries per {group[:-1]}", bins.entries_per_key, found.entries_per_key, "entries"),
    ]
    columns = st.columns(3)
    for column, (title, counted, marks, unit) in zip(columns, charts, strict=True):
        with column:
            if counted:
                st.altair_chart(histogram(counted, marks, title=title, unit=unit))
            else:
                st.caption(f"{title}: no entries in the time frame")
    st.dataframe(
        [
            {
                "distribution": f"{title} ({unit})",
                **{m: _rounded(getattr(d, m)) for m in ("avg", "p95", "min", "max")},
            }
            for title, _, d, unit in charts
        ],
        hide_index=True,
    )

    tables = [(f"Top {group}", found.top_keys), ("Top tags", found.top_tags)]
    if found.unique_speakers is not None:
        tables.insert(1, ("Top speakers", found.top_speakers))
    for column, (title, counts) in zip(st.columns(len(tables)), tables, strict=True):
        column.markdown(f"**{title}**")
        column.dataframe([{"name": c.name, "entries": c.entries} for c in counts], hide_index=True)
