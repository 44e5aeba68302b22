"""The Test compaction and AI assistant pages in this process (AppTest) on a real LanceDB."""

from __future__ import annotations

from lab_support import OpenPage

from lab.run_view import plain
from memory import banks, entries
from memory.assistant import OFFLINE_ASSISTANT_LABEL
from memory.context import Context
from memory.judge import HEURISTIC_LABEL
from memory.models import BankCreate, EntryIn
from memory.prompt_lab import list_runs

PASTED = """ann: My order 4471 arrived broken.
bob (agent): I will send a replacement by Friday 12 June.
ann: Please also refund the 15 dollar shipping fee.
bob (agent): Done: 15 dollars refunded, replacement ships Friday.
ann: Thanks, that works."""


def texts(app: object) -> str:
    """Return every markdown and caption text of the page, joined."""
    parts = [m.value for m in app.markdown] + [c.value for c in app.caption]  # type: ignore[attr-defined]
    return "\n".join(parts)


def test_a_test_on_pasted_entries_shows_summary_surviving_entries_and_evaluation(
    open_page: OpenPage, ctx: Context
) -> None:
    app = open_page("test_compaction")
    assert {r.key for r in app.radio} >= {"tc_source"}
    app.radio(key="tc_source").set_value("Pasted entries").run()
    app.text_area(key="tc_pasted").input(PASTED).run()
    app.text_area(key="tc_prompt").input("Keep order numbers, dates and amounts.").run()
    assert "Cost preview: 5 entries" in texts(app)
    app.button(key="tc_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    shown = texts(app)
    assert "**Summary**" in shown and "4471" in shown
    assert "**Surviving entries**" in shown
    run = list_runs(ctx)[0]
    assert run.summarizer in shown and HEURISTIC_LABEL in shown
    criteria = app.table[0].value
    assert criteria["criterion"].tolist() == [c.name for c in run.evaluation.criteria]
    assert {m.label: m.value for m in app.metric}["Overall score"] == (
        f"{run.evaluation.overall:.2f}"
    )
    assert f"Best prompt so far on these entries ({run.evaluation.overall:.2f}" in (
        app.success[0].value
    )
    app.text_area(key="tc_prompt_b").input("Keep only what was promised.").run()
    app.button(key="tc_compare").click().run()
    assert not app.error, [e.value for e in app.error]
    saved = list_runs(ctx)
    assert len(saved) == 3  # the first run, then A and B
    [b] = [r for r in saved if r.prompt == "Keep only what was promised."]
    a = next(r for r in saved if r is not b and r.id != run.id)
    assert [h.value for h in app.subheader][:2] == [
        f"Prompt A: {a.evaluation.overall:.2f}",
        f"Prompt B: {b.evaluation.overall:.2f}",
    ]
    assert a.prompt == run.prompt and a.original == b.original


def test_the_create_form_tests_its_prompt_on_the_test_page(open_page: OpenPage) -> None:
    app = open_page("banks")
    prompt = next(t for t in app.text_area if (t.key or "").endswith("_prompt"))
    prompt.input("Keep the customer's order numbers.")
    app.button(key="create_test_prompt").click().run()
    assert app.text_area(key="tc_prompt").value == "Keep the customer's order numbers."
    assert app.radio(key="tc_source").value == "Pasted entries"


def test_a_bad_paste_is_an_error_that_names_the_line(open_page: OpenPage) -> None:
    app = open_page("test_compaction")
    app.radio(key="tc_source").set_value("Pasted entries").run()
    app.text_area(key="tc_pasted").input('ann: hi\n{"content": ').run()
    assert any("line 2" in e.value for e in app.error), [e.value for e in app.error]


def test_the_assistant_changes_nothing_until_accepted_and_then_exactly_the_proposal(
    open_page: OpenPage, ctx: Context
) -> None:
    before = banks.create(ctx, BankCreate(name="support", type="conversation", retention_days=365))
    app = open_page("assistant")
    app.text_area(key="as_description").input(
        "customer support, about 50 messages per day per customer"
    )
    app.radio(key="as_target").set_value("An existing bank").run()
    app.button(key="as_propose").click().run()
    assert f"Proposed by {OFFLINE_ASSISTANT_LABEL} · mode balanced" in texts(app)
    proposal = app.session_state["as_proposal"]
    assert proposal.rationale and all(plain(line) in texts(app) for line in proposal.rationale)
    # before Accept: what changes on the bank shown, and a warning that retention shrinks
    [changes] = [t.value for t in app.table if "setting" in t.value.columns]
    assert changes.to_dict("records") == [
        {"setting": "compaction prompt", "now": "off",
         "after accept": proposal.compaction_prompt, "changes": "yes"},
        {"setting": "max size (tokens)", "now": "off", "after accept": "8000", "changes": "yes"},
        {"setting": "max turns", "now": "off", "after accept": "200", "changes": "yes"},
        {"setting": "retention", "now": "365 days", "after accept": "90 days", "changes": "yes"},
        {"setting": "mode (fixed at creation)", "now": "balanced", "after accept": "balanced",
         "changes": ""},
    ]  # fmt: skip
    [shrinks] = [w.value for w in app.warning if "Retention shrinks" in w.value]
    assert shrinks.startswith("Retention shrinks from 365 days to 90 days: older entries are")
    app.button(key="as_test_prompt").click().run()  # one click: synthetic entries, this prompt
    assert not app.error, [e.value for e in app.error]
    assert "Test of the proposed prompt" in [h.value for h in app.subheader]
    assert f"prompt: {proposal.compaction_prompt}" in texts(app)
    app.button(key="as_discard").click().run()
    assert "nothing was changed" in app.success[0].value
    assert banks.get(ctx, "support") == before
    app.button(key="as_propose").click().run()
    app.button(key="as_accept").click().run()
    after = banks.get(ctx, "support")
    assert (after.compaction_prompt, after.max_tokens, after.max_turns, after.retention_days) == (
        proposal.compaction_prompt,
        proposal.max_tokens,
        proposal.max_turns,
        proposal.retention_days,
    )
    assert "Applied the proposal to bank 'support'" in app.success[0].value


def test_a_test_on_a_banks_entries_leaves_the_bank_as_it_was(
    open_page: OpenPage, ctx: Context
) -> None:
    bank = banks.create(ctx, BankCreate(name="support", type="conversation"))
    entries.write(
        ctx,
        bank,
        [EntryIn(key="c1", speaker="ann", content=line) for line in PASTED.splitlines()],
    )
    version = ctx.store.table_version(bank.id)
    app = open_page("test_compaction")
    assert app.radio(key="tc_source").value == "Bank entries"
    app.button(key="tc_run").click().run()
    assert not app.error, [e.value for e in app.error]
    [run] = list_runs(ctx, bank="support")
    assert f"Source: {run.source_label}" in texts(app)
    assert len(run.original) == 5 and "Saved runs on the entries of 'support'." in texts(app)
    assert ctx.store.table_version(bank.id) == version
    assert banks.get(ctx, "support") == bank


def test_accept_for_a_new_bank_fills_the_create_form_with_the_templates_mode(
    open_page: OpenPage, ctx: Context
) -> None:
    app = open_page("assistant")
    app.text_area(key="as_description").input("minutes of our weekly team meeting").run()
    app.button(key="as_propose").click().run()
    assert app.session_state["as_proposal"].mode == "accurate"  # the meeting-notes template's
    app.button(key="as_accept").click().run()  # a new bank: on to the create form
    [mode] = [s for s in app.selectbox if s.label == "Mode (fixed after creation)"]
    assert mode.value == "accurate"
    app.switch_page("views/banks.py").run()  # AppTest reruns its own page, not the switched-to
    [name] = [t for t in app.text_input if t.label == "Name"]
    name.input("team")
    app.button(key="create_bank").click().run()
    assert not app.error, [e.value for e in app.error]
    assert banks.get(ctx, "team").mode == "accurate"
