"""The Test compaction page's run log in this process (AppTest): a diff of two saved runs,
star, delete, export."""

from __future__ import annotations

import csv
import io

from lab_support import OpenPage

from memory.context import Context
from memory.prompt_lab import list_runs

KEEP = "Keep names, numbers, dates and preferences."
DROP = "Write one short sentence. Drop all numbers and names."


def test_the_run_log_diffs_two_runs_stars_exports_and_deletes(
    open_page: OpenPage, ctx: Context
) -> None:
    app = open_page("test_compaction")
    app.radio(key="tc_source").set_value("Synthetic entries").run()
    app.text_area(key="tc_description").input("support chats about late deliveries").run()
    app.text_area(key="tc_prompt").input(KEEP).run()
    app.text_area(key="tc_prompt_b").input(DROP).run()
    app.button(key="tc_compare").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    runs = {r.prompt: r for r in list_runs(ctx)}  # both at the test clock's one time
    first, second = runs[KEEP], runs[DROP]
    app.selectbox(key="log_first").set_value(first.id).run()
    app.selectbox(key="log_second").set_value(second.id).run()
    shown = "\n".join(m.value for m in app.markdown)
    assert "**Diff two runs**" in shown and "Planted facts that moved" in shown
    assert "<mark" in shown  # the sentences only one summary has are highlighted
    deltas = {row["criterion"]: row for row in _rows(app.table[-2].value)}
    assert deltas["overall"]["delta"] == (
        f"{second.evaluation.overall - first.evaluation.overall:+.2f}"
    )
    moved = _rows(app.table[-1].value)
    assert moved and all(row["first"] == "kept" for row in moved)  # what B dropped

    [exported] = [d for d in app.get("download_button") if d.proto.label == "Export CSV"]
    assert exported is not None
    app.selectbox(key="log_open").set_value(first.id).run()
    app.button(key="log_star").click().run()
    assert f"Starred run {first.id[:8]}" in app.success[0].value
    assert {r.prompt: r.starred for r in list_runs(ctx)} == {KEEP: True, DROP: False}
    app.checkbox(key="log_sure").check().run()
    app.selectbox(key="log_open").set_value(second.id).run()
    app.button(key="log_delete").click().run()
    assert [r.id for r in list_runs(ctx)] == [first.id]
    assert any(f"Deleted run {second.id[:8]}" in s.value for s in app.success)


def _rows(frame: object) -> list[dict[str, str]]:
    """Return a table element's value (a pandas frame) as rows."""
    text = frame.to_csv(index=False)  # type: ignore[attr-defined]
    return list(csv.DictReader(io.StringIO(text)))
