"""The compaction test lab's core (no Streamlit): run the real summarizer with a candidate
prompt on a bank's entries (read only), pasted entries or synthetic ones with planted facts,
judge the summary, diff the planted facts, preview the cost, save and compare runs."""

from __future__ import annotations

from memory.prompt_lab.facts import fact_diff
from memory.prompt_lab.pasted import parse_pasted
from memory.prompt_lab.records import (
    BankSource,
    CostPreview,
    DraftEntry,
    FactDiff,
    PastedSource,
    PlantedFact,
    Source,
    SyntheticSource,
    TestOptions,
    TestRun,
)
from memory.prompt_lab.run import judge_label, preview, run_test
from memory.prompt_lab.saved import compare, delete_runs, list_runs
from memory.prompt_lab.sources import generator_label, synthesize
from memory.prompt_lab.synthetic import TEMPLATE_GENERATOR_LABEL, SyntheticSet

__all__ = [
    "TEMPLATE_GENERATOR_LABEL",
    "BankSource",
    "CostPreview",
    "DraftEntry",
    "FactDiff",
    "PastedSource",
    "PlantedFact",
    "Source",
    "SyntheticSet",
    "SyntheticSource",
    "TestOptions",
    "TestRun",
    "compare",
    "delete_runs",
    "fact_diff",
    "generator_label",
    "judge_label",
    "list_runs",
    "parse_pasted",
    "preview",
    "run_test",
    "synthesize",
]
