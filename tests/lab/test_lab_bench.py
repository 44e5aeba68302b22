"""The Test compaction page as an experiment bench (issue 23): prompts A and B give different
offline summaries and say what they followed, the heuristic judge says it is deterministic,
a pasted summary is judged, a failed run does not leave the last result under its error."""

from __future__ import annotations

from lab_support import OpenPage
from test_run_pages import texts

from lab.run_view import FOLLOWING_TITLE
from memory.config import get_template

CHAT = """Dana: Hi, my order 48213 arrived damaged on March 3.
Agent: Sorry to hear that. I can refund 120 dollars or send a replacement.
Dana: Please send a replacement to my office in Leeds.
Agent: Done, the replacement ships on March 5 with tracking number 99812.
Dana: The box also had a broken hinge, which is annoying.
Agent: I have opened a ticket about the hinge and our manager Priya will call you.
Dana: Thanks, bye!"""
TERSE = "Write one short sentence. Drop all numbers and names."


def _pasted(open_page: OpenPage):  # type: ignore[no-untyped-def]
    app = open_page("test_compaction")
    app.radio(key="tc_source").set_value("Pasted entries").run()
    app.text_area(key="tc_pasted").input(CHAT).run()
    return app


def test_prompts_a_and_b_differ_offline_and_say_what_they_followed(open_page: OpenPage) -> None:
    app = _pasted(open_page)
    app.text_area(key="tc_prompt").input(get_template("customer-support").compaction_prompt).run()
    app.text_area(key="tc_prompt_b").input(TERSE).run()
    app.button(key="tc_compare").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert [e.label for e in app.expander].count(FOLLOWING_TITLE) == 2
    shown = texts(app)
    assert "**drop numbers**: followed" in shown and "**one sentence**: followed" in shown
    assert "**keep numbers**" in shown
    # the two results as shown (the run log's diff below them highlights with <mark>)
    summaries = [
        m.value for m in app.markdown if "extractive summary" in m.value and "<mark" not in m.value
    ]
    assert len(summaries) == 2 and summaries[0] != summaries[1]
    assert "48213" in summaries[0] and "48213" not in summaries[1]


def test_the_heuristic_judge_is_said_to_be_deterministic(open_page: OpenPage) -> None:
    app = _pasted(open_page)
    assert "deterministic" in texts(app)
    assert "tc_runs" not in {n.key for n in app.number_input}
    app.text_input(key="tc_judge").input("openai/gpt-4o-mini").run()
    assert "tc_runs" in {n.key for n in app.number_input}


def test_a_pasted_summary_is_judged_against_the_source(open_page: OpenPage) -> None:
    app = _pasted(open_page)
    app.text_area(key="tc_own_summary").input(
        "Dana's order 48213 arrived damaged on March 3; a replacement ships on March 5."
    ).run()
    app.button(key="tc_judge_own").click().run()
    assert not app.error, [e.value for e in app.error]
    assert any(m.label == "Overall score" for m in app.metric)


def test_a_failed_run_shows_its_error_alone(open_page: OpenPage) -> None:
    app = _pasted(open_page)
    app.button(key="tc_run").click().run()
    assert any(m.label == "Overall score" for m in app.metric)
    app.text_input(key="tc_judge").input("gpt-5-turbo").run()  # litellm cannot route it
    app.button(key="tc_run").click().run()
    errors = [e.value for e in app.error]  # checked before the summarizer runs
    assert any("judge: unknown model 'gpt-5-turbo': litellm cannot" in e for e in errors), errors
    assert not any(m.label == "Overall score" for m in app.metric)


def test_best_prompt_ranks_only_runs_on_the_same_entries(open_page: OpenPage) -> None:
    app = _pasted(open_page)
    app.text_area(key="tc_prompt").input("Keep numbers.").run()
    app.button(key="tc_run").click().run()
    other = "ann: I moved to Porto.\nbob: Noted, your new address is saved.\nann: Thanks."
    app.text_area(key="tc_pasted").input(other).run()
    app.text_area(key="tc_prompt").input("Keep places.").run()
    app.button(key="tc_run").click().run()
    best = app.success[0].value
    assert "Keep places." in best and "1 runs" in best  # not pooled with the other entries


def test_a_suite_shows_the_numbers_the_cli_shows(open_page: OpenPage, ctx) -> None:  # type: ignore[no-untyped-def]
    from memory.ops import lab
    from memory.prompt_lab import PastedSource
    from memory.prompt_lab.suite import SuiteRequest

    app = _pasted(open_page)
    app.number_input(key="suite_cases").set_value(1).run()
    app.number_input(key="suite_rounds").set_value(3).run()
    app.button(key="suite_run").click().run()
    assert not app.error, [e.value for e in app.error]
    request = SuiteRequest(
        source=PastedSource(text=CHAT),
        prompts=[app.text_area(key="tc_prompt").value],
        cases=1,
        rounds=3,
        thresholds={"faithfulness": 0.8, "fact_coverage": 0.5},
    )
    expected = lab.run_suite(ctx, request)
    shown = texts(app)
    assert f"fingerprint `{expected.fingerprint}`" in shown
    table = app.table[0].value
    assert table["survival per round"].tolist() == [
        " ".join(f"{v:.2f}" for v in expected.prompts[0].survival)
    ]
    assert table["pass rate"].tolist() == [f"{expected.prompts[0].pass_rate:.0%}"]


def test_many_flags_are_one_warning_box_and_instructions_with_nothing_checkable_are_na(
    open_page: OpenPage,
) -> None:
    app = _pasted(open_page)
    app.text_area(key="tc_prompt").input("Summarize it.").run()  # nothing a program can check
    invented = " ".join(f"Order {10_000 + n} was refunded by Manager Zed{n}." for n in range(40))
    app.text_area(key="tc_own_summary").input(invented).run()
    app.button(key="tc_judge_own").click().run()
    assert not app.error, [e.value for e in app.error]
    flags = app.session_state["tc_own_result"].flags
    assert len(flags) > 20
    assert len(app.warning) <= 2  # the flags' one box (and perhaps the size warning)
    assert f"raised {len(flags)} flag(s)" in app.warning[-1].value
    assert "more (all in the run's JSON export)" in app.warning[-1].value
    [row] = [r for r in app.table[0].value.to_dict("records") if r["criterion"] == "instructions"]
    assert row["score"] == "n/a" and "no instruction the heuristic judge can check" in row["reason"]


def _max_size(app):  # type: ignore[no-untyped-def]
    [found] = [n for n in app.number_input if n.label == "Max size (tokens, 0 = off)"]
    return found


def test_prompt_and_thresholds_follow_the_bank_and_source_shown(open_page: OpenPage, ctx) -> None:  # type: ignore[no-untyped-def]
    from memory import banks
    from memory.models import BankCreate

    for name, prompt, tokens in (("alpha", "Keep alpha facts.", 900), ("beta", "Keep beta.", 4000)):
        banks.create(
            ctx,
            BankCreate(name=name, type="conversation", compaction_prompt=prompt, max_tokens=tokens),
        )
    app = open_page("test_compaction")
    shown = lambda: (  # noqa: E731
        app.text_area(key="tc_prompt").value,
        _max_size(app).value,
    )
    assert shown() == ("Keep alpha facts.", 900)
    app.text_area(key="tc_prompt").input("My edit for alpha.").run()
    [picker] = [s for s in app.selectbox if s.label == "Bank"]
    picker.select_index(1).run()
    assert shown() == ("Keep beta.", 4000)  # beta's own, not alpha's (or the edit)
    app.radio(key="tc_source").set_value("Pasted entries").run()
    assert shown() == ("Keep beta.", 0)  # pasted entries: no bank threshold carried over
    assert not app.warning and not app.exception
    app.text_area(key="tc_pasted").input(CHAT).run()
    _max_size(app).set_value(8000).run()  # a budget above the source
    app.button(key="tc_run").click().run()
    warned = [w.value for w in app.warning if w.value.startswith("The summary budget (")]
    assert len(warned) == 1 and "is at least the source" in warned[0], warned


def _shown_evaluation(body: str) -> None:
    from lab.run_view import show_evaluation
    from memory.judge import Evaluation

    show_evaluation(Evaluation.model_validate_json(body))


def test_several_llm_runs_chart_per_run_scores_and_show_the_agreement() -> None:
    from streamlit.testing.v1 import AppTest

    from memory.judge import Evaluation
    from memory.judge.records import CriterionScore, RunScore, agreement_of

    criteria = [
        CriterionScore(name="faithfulness", score=0.7, reason="", scores=[0.6, 0.8], spread=0.1),
        CriterionScore(name="fact_coverage", score=0.5, reason="", scores=[0.5, 0.5], spread=0.0),
    ]
    offline = [RunScore(name="faithfulness", score=0.9, reason=""),
               RunScore(name="fact_coverage", score=0.4, reason="")]  # fmt: skip
    evaluation = Evaluation(
        criteria=criteria, overall=0.6, judge="openai/x (deepeval)", offline=False, runs=2,
        cost_tokens=10, compression_ratio=0.3, flags=[],
        agreement=agreement_of(criteria, offline),
    )  # fmt: skip
    app = AppTest.from_function(_shown_evaluation, args=(evaluation.model_dump_json(),))
    app.run()
    assert not app.exception, app.exception
    assert any(c.value == "Scores per judge run (2 runs)" for c in app.caption)
    assert app.get("arrow_vega_lite_chart") or app.get("vega_lite_chart")
    assert any("Agreement of the heuristic judge with the LLM judge: 0.85" in c.value
               for c in app.caption)  # fmt: skip
