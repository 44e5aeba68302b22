"""The lab's pages in this process (AppTest) on a real LanceDB: widgets, actions, charts."""

from __future__ import annotations

import json
from datetime import timedelta

from lab_support import OpenPage

from lab.ui import CONTEXT_KEY
from memory import banks, entries
from memory.clock import FixedClock
from memory.context import Context
from memory.models import BankCreate, BankUpdate, EntryIn
from memory.transfer import export


def fixture_bank(ctx: Context, clock: FixedClock) -> None:
    bank = banks.create(ctx, BankCreate(name="support", type="conversation"))
    entries.write(
        ctx,
        bank,
        [
            EntryIn(
                key=f"c{i % 3}",
                speaker=["ann", "bob"][i % 2],
                content=" ".join(["word"] * (i + 1)),
                tags=["billing"] if i % 2 else [],
                created_at=clock.now() - timedelta(days=i),
            )
            for i in range(12)
        ],
    )


def test_banks_page_creates_from_a_template_and_locks_type_and_mode(
    open_page: OpenPage, ctx: Context
) -> None:
    app = open_page("banks")
    app.selectbox(key="create_template").select("customer-support").run()
    prompt = next(t for t in app.text_area if (t.key or "").endswith("_prompt"))
    assert "support conversation" in prompt.value
    next(t for t in app.text_input if (t.key or "").endswith("_name")).input("help desk")
    app.button(key="create_bank").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    bank = banks.get(ctx, "help desk")
    assert (bank.type, bank.max_tokens, bank.retention_days) == ("conversation", 8000, 90)
    locked = {t.label: t for t in app.text_input if "locked" in t.label}
    assert locked["Type (locked)"].value == "conversation" and locked["Type (locked)"].disabled
    assert locked["Mode (locked)"].disabled
    assert "help desk" in app.dataframe[0].value["name"].tolist()


def test_banks_page_saves_a_configuration_and_shows_a_bad_value_as_an_error(
    open_page: OpenPage, ctx: Context
) -> None:
    banks.create(ctx, BankCreate(name="notes", type="general"))
    app = open_page("banks")
    retention = next(
        s for s in app.selectbox if (s.key or "").startswith("cfg_") and "retention" in s.key
    )
    retention.select("7 days").run()
    app.button(key="cfg_save").click().run()
    assert banks.get(ctx, "notes").retention_days == 7
    name = next(
        t for t in app.text_input if (t.key or "").startswith("cfg_") and t.key.endswith("_name")
    )
    name.input("   ").run()
    app.button(key="cfg_save").click().run()
    assert app.error, "a blank name is shown as an error"
    assert banks.get(ctx, "notes").name == "notes"


def test_statistics_page_shows_cards_charts_and_tables(
    open_page: OpenPage, ctx: Context, clock: FixedClock
) -> None:
    fixture_bank(ctx, clock)
    app = open_page("statistics")
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Total entries"] == "12"
    assert metrics["Unique conversations"] == "3"
    assert metrics["Unique speakers"] == "2"
    charts = [json.loads(c.proto.spec) for c in app.get("vega_lite_chart")]
    assert [c["title"] for c in charts] == [
        "Tokens per entry",
        "Entry age",
        "Entries per conversation",
    ]
    tokens = charts[0]
    bars = tokens["layer"][0]["data"]["values"]
    assert sum(b["count"] for b in bars) == 12  # the bins, counted in the core
    marks = tokens["layer"][1]["data"]["values"]
    assert [m["mark"] for m in marks] == ["avg", "p95", "min", "max"]
    assert [m["value"] for m in marks][2:] == [1, 12]
    app.selectbox(key="stats_frame").select("Last 7 days").run()
    # 0 to 7 days old: the frame starts exactly 7 days ago, inclusive
    assert {m.label: m.value for m in app.metric}["Total entries"] == "8"
    assert app.session_state[CONTEXT_KEY] is ctx


def test_banks_page_compacts_now_exports_and_deletes_the_source_after_confirmation(
    open_page: OpenPage, ctx: Context, clock: FixedClock
) -> None:
    fixture_bank(ctx, clock)
    banks.update(ctx, "support", BankUpdate(compaction_prompt="Keep every number.", max_turns=2))
    app = open_page("banks")
    app.button(key="cfg_compact").click().run()
    assert not app.exception, app.exception
    assert banks.get(ctx, "support").summary_count == 3  # one per key, each over 2 turns
    assert any("compacted" in m.value for m in app.markdown)
    assert any("entries, about" in m.value for m in app.markdown)  # the export estimate
    app.button(key="cfg_export").click().run()
    assert app.get("download_button"), "the export is offered for download"
    assert app.button(key="cfg_reset").disabled  # not before the confirmation
    next(c for c in app.checkbox if (c.key or "").startswith("cfg_sure")).check().run()
    app.button(key="cfg_reset").click().run()
    assert export.count_entries(ctx, banks.get(ctx, "support")) == 0
    assert banks.get(ctx, "support").compaction_prompt == "Keep every number."
