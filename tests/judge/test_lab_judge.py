"""A compaction test with an LLM judge: the lab passes the judge it is given (a scripted
completer here, no server) and labels the run's scores with it."""

from __future__ import annotations

from judge_support import PROMPT, SOURCE, JudgeScript

from memory.context import Context
from memory.prompt_lab import PastedSource, TestOptions
from memory.prompt_lab.run import LabModels, run_checked
from memory.testing import ScriptedCompleter

SUMMARY = "Dana's order #88213 arrived with a cracked tank on May 3; a new one ships Friday."


def test_a_lab_run_is_judged_by_the_completer_it_is_given(
    ctx: Context, script: JudgeScript, judge: ScriptedCompleter
) -> None:
    summarizer = ScriptedCompleter().enqueue(SUMMARY)
    models = LabModels(summarizer=summarizer, judge=judge)
    pasted = PastedSource(text="\n".join(SOURCE))

    run = run_checked(ctx, pasted, TestOptions(prompt=PROMPT), models)

    assert run.summary == SUMMARY and run.summarizer.startswith("scripted/test")
    assert run.evaluation.judge == "openai/judge-test (deepeval)"
    assert not run.evaluation.offline
    assert run.evaluation.criterion("faithfulness").score > 0
    assert judge.calls and script.requests  # the judge was asked, through no server
