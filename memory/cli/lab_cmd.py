"""`membank test-compaction`, `membank lab-runs`, `membank assistant`: the lab's core from the
command line (the Streamlit lab is `membank lab`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.cli.args import context, non_negative, positive
from memory.cli.output import counted, emit_json, say, table
from memory.errors import InvalidInput

if TYPE_CHECKING:
    from memory.assistant import Proposal
    from memory.prompt_lab import CostPreview, FactDiff, Source, TestRun

TYPES = ["conversation", "general"]


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the test-compaction, lab-runs and assistant commands."""
    test = commands.add_parser(
        "test-compaction",
        parents=[common],
        help="run the summarizer with a prompt on entries and judge it (changes no bank)",
    )
    source = test.add_mutually_exclusive_group(required=True)
    source.add_argument("--bank", metavar="BANK", help="a bank's entries (read only)")
    source.add_argument("--pasted", metavar="FILE", help="JSON lines or `speaker: text` (- stdin)")
    source.add_argument("--synthetic", metavar="TEXT", help="generate entries from a description")
    test.add_argument("--key", help="with --bank: this key (default: its largest)")
    test.add_argument("--type", choices=TYPES, help="--pasted/--synthetic bank type")
    test.add_argument("--count", type=positive, default=20, help="--synthetic: entries (20)")
    test.add_argument("--seed", type=non_negative, default=0, help="--synthetic: seed (0)")
    test.add_argument("--prompt", required=True, help="the compaction prompt to test")
    test.add_argument("--compare", metavar="PROMPT", help="a second prompt, on the same entries")
    test.add_argument("--max-tokens", type=non_negative, help="threshold to plan with")
    test.add_argument("--max-turns", type=non_negative, help="threshold to plan with")
    test.add_argument(
        "--judge",
        metavar="MODEL",
        help="judge model (default: $MEMBANK_JUDGE_MODEL, the heuristic judge offline)",
    )
    test.add_argument("--runs", type=positive, default=1, help="judge runs per case (1)")
    test.add_argument("--preview", action="store_true", help="print the cost only; run nothing")
    test.add_argument("--no-save", action="store_true", help="do not save the run")
    suite = test.add_argument_group("suites (the prompts over many cases and rounds)")
    suite.add_argument(
        "--suite",
        type=positive,
        metavar="N",
        help="run a suite of N cases: N keys of --bank, of --pasted, or N --synthetic seeds",
    )
    suite.add_argument("--rounds", type=positive, default=3, help="compaction rounds (3)")
    suite.add_argument(
        "--target", type=float, default=0.25, help="summary budget, share of the source (0.25)"
    )
    suite.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar="CRITERION=X",
        help="a case passes when the criterion scores at least X (repeatable)",
    )
    suite.add_argument(
        "--min-pass-rate",
        type=float,
        default=1.0,
        help="exit 1 when a prompt's pass rate is below this share of cases (1.0)",
    )
    suite.add_argument("--save-set", metavar="FILE", help="write the cases as JSON lines")
    test.set_defaults(handler=_test)

    from memory.cli import lab_runs_cmd

    lab_runs_cmd.register(commands, common)

    helper = commands.add_parser(
        "assistant", parents=[common], help="propose a bank configuration from a description"
    )
    helper.add_argument(
        "description", metavar="DESCRIPTION", help="what the bank is for, in your words"
    )
    helper.add_argument("--type", choices=TYPES, help="the bank type (default: guessed)")
    helper.add_argument("--apply", metavar="BANK", help="accept the proposal on this bank")
    helper.set_defaults(handler=_assistant)


def _source(args: argparse.Namespace) -> Source:
    from memory.prompt_lab import BankSource, PastedSource, SyntheticSource

    if args.bank is not None:
        if args.type is not None:
            raise InvalidInput("--type is for --pasted/--synthetic: a bank has its own type")
        return BankSource(bank=args.bank, key=args.key)
    if args.key is not None:
        raise InvalidInput("--key is for --bank: pasted entries carry their own keys")
    kind = args.type or "conversation"
    if args.pasted is not None:
        return PastedSource(text=_read(args.pasted), bank_type=kind)
    return SyntheticSource(
        description=args.synthetic, bank_type=kind, count=args.count, seed=args.seed
    )


def _read(path: str) -> str:
    from memory.cli.args import text_arg

    if path == "-":
        return text_arg("-")
    try:
        data = Path(path).expanduser().read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read --pasted {path!r}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"--pasted {path!r} is not UTF-8 (byte {exc.start}): re-encode it as UTF-8"
        ) from None


def _thresholds(given: list[str]) -> dict[str, float]:
    found: dict[str, float] = {}
    for item in given:
        name, sep, value = item.partition("=")
        try:
            found[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise InvalidInput(f"--threshold {item!r}: write CRITERION=X, e.g. faithfulness=0.8")
    return found


def _suite(args: argparse.Namespace) -> int:
    from memory.ops import lab
    from memory.prompt_lab.suite import SuiteRequest

    if args.key is not None:
        raise InvalidInput("--suite takes N keys of the bank: drop --key")
    prompts = [args.prompt] + ([args.compare] if args.compare is not None else [])
    request = SuiteRequest(
        source=_source(args),
        prompts=prompts,
        cases=args.suite,
        rounds=args.rounds,
        target=args.target,
        thresholds=_thresholds(args.threshold),
        min_pass_rate=args.min_pass_rate,
    )
    ctx = context(args)
    if args.save_set:
        import json

        drafts = lab.suite_set(ctx, request)
        rows = [d.model_dump(mode="json", exclude_none=True) for d in drafts]
        try:
            Path(args.save_set).write_text(
                "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
            )
        except OSError as exc:
            raise InvalidInput(f"cannot write --save-set {args.save_set!r}: {exc}") from None
        say(f"saved {len(rows)} entries of the suite's cases to {args.save_set}")
    result = lab.run_suite(ctx, request, args.judge)
    if args.json:
        emit_json(result)
    else:
        _say_suite(result)
    return 0 if result.passed else 1


def _say_rows(rows: list[dict[str, str]]) -> None:
    headers = list(dict.fromkeys(k for row in rows for k in row))
    say(table([[row.get(h, "") for h in headers] for row in rows], headers))


def _say_suite(result: Any) -> None:
    say(
        f"suite: {result.source_label}, {result.rounds} rounds, target "
        f"{result.target:.0%} of the source; entry set fingerprint {result.fingerprint}"
    )
    for warning in result.warnings:
        say(f"warning: {warning}")
    rows = []
    for p in result.prompts:
        rows.append(
            {
                "prompt": _short(p.prompt, 40),
                "pass rate": f"{p.pass_rate:.0%}",
                **{f"{k} pass": f"{v:.0%}" for k, v in p.criterion_pass.items()},
                "survival per round": " ".join(f"{v:.2f}" for v in p.survival),
                "tokens in/out": f"{p.tokens_in}/{p.tokens_out}",
                "seconds": f"{p.seconds:.1f}",
                "passed": "yes" if p.passed else "NO",
            }
        )
    _say_rows(rows)
    say("")
    _say_rows(
        [
            {
                "case": _short(c.case, 30),
                "prompt": _short(c.prompt, 24),
                "survival": " ".join(f"{v:.2f}" for v in c.survival),
                **{k: "n/a" if v is None else f"{v:.2f}" for k, v in c.scores.items()},
                "pass": "yes" if c.ok else "no",
            }
            for c in result.cases
        ]
    )
    needed = f"{result.min_pass_rate:.0%}"
    say(f"suite {'passed' if result.passed else 'FAILED'} (pass rate needed: {needed})")


def _test(args: argparse.Namespace) -> int:
    from memory.ops import lab
    from memory.prompt_lab import TestOptions

    if args.suite is not None:
        return _suite(args)
    ctx = context(args)
    options = TestOptions(
        prompt=args.prompt,
        max_tokens=args.max_tokens,
        max_turns=args.max_turns,
        judge_model=args.judge,
        runs=args.runs,
    )
    other = None
    if args.compare is not None:  # the second prompt, checked as the first
        other = TestOptions.model_validate({**options.model_dump(), "prompt": args.compare})
    request = lab.LabTest(source=_source(args), options=options, save=not args.no_save)
    if args.preview:
        cost = lab.preview(ctx, request)
        if other is not None:
            cost = cost.model_copy(update={"judge_calls": cost.judge_calls * 2})
        _say_preview(args, cost)
        return 0
    if other is not None:
        first, second = lab.compare(ctx, request, other)
        if args.json:
            emit_json([first, second])
        else:
            say_run(first, "prompt A")
            say("")
            say_run(second, "prompt B")
            say("")
            better = "A" if first.evaluation.overall >= second.evaluation.overall else "B"
            say(
                f"overall: A {first.evaluation.overall:.2f}, B {second.evaluation.overall:.2f}; "
                f"prompt {better} scored higher"
            )
        return 0
    run = lab.test_compaction(ctx, request)
    if args.json:
        emit_json(run)
    else:
        say_run(run, None)
    return 0


def _say_preview(args: argparse.Namespace, cost: CostPreview) -> None:
    if args.json:
        emit_json(cost)
        return
    say(f"entries:     {cost.entries:,}")
    say(f"tokens:      {cost.tokens:,}")
    say(f"judge calls: {cost.judge_calls:,}")
    say(f"summarizer:  {cost.summarizer}")
    say(f"judge:       {cost.judge}")
    say("nothing was run (drop --preview to run the test)")


def say_run(run: TestRun, title: str | None) -> None:
    """Print one run: prompt, source, summary, surviving entries, scores, fact diff."""
    head = f"{title} " if title else ""
    say(f"{head}prompt: {run.prompt}")
    say(f"source:     {run.source_label}")
    summarized = len(run.original) - len(run.surviving)
    say(
        f"entries:    {len(run.original)}: {summarized} summarized, "
        f"{len(run.surviving)} kept verbatim"
    )
    say(f"summarizer: {run.summarizer}")
    say(f"judge:      {run.evaluation.judge}")
    say("\nsummary:")
    say("  " + run.summary.replace("\n", "\n  "))
    say(f"\nsurviving entries ({len(run.surviving)}, kept verbatim):")
    for entry in run.surviving:
        say(f"  {entry.speaker}: {entry.content}" if entry.speaker else f"  {entry.content}")
    evaluation = run.evaluation
    say(f"\nevaluation (overall {evaluation.overall:.2f}, {counted(evaluation.runs, 'run')}):")
    rows = [
        (
            c.name,
            "n/a"
            if c.error
            else f"{c.score:.2f}" + (f" ±{c.spread:.2f}" if evaluation.runs > 1 else ""),
            c.error or c.reason,
        )
        for c in evaluation.criteria
    ]
    say(table(rows, ["criterion", "score", "reason"]))
    say(f"compression ratio: {evaluation.compression_ratio:.2f}")
    warning = run.budget_warning()
    if warning is not None:
        say(f"warning: {warning}")
    if evaluation.agreement is not None:
        agree = evaluation.agreement
        say(
            f"heuristic judge vs LLM judge: agreement {agree.agreement:.2f} "
            f"(mean gap {agree.mean_gap:.2f} over {len(agree.criteria)} criteria)"
        )
    for flag in evaluation.flags:
        say(f"flag: {flag}")
    if run.fact_diff is not None:
        _say_diff(run.fact_diff)
    if run.probe is not None:
        say(run.probe.line())
    say(f"\nrun {run.id}")


def _say_diff(diff: FactDiff) -> None:
    say(
        f"\nplanted facts: {len(diff.kept)} kept, {len(diff.dropped)} dropped, "
        f"{len(diff.contradicted)} contradicted"
    )
    rows = [
        (status, fact.kind, fact.text, fact.value)
        for status, facts in (
            ("kept", diff.kept),
            ("dropped", diff.dropped),
            ("contradicted", diff.contradicted),
        )
        for fact in facts
    ]
    say(table(rows, ["status", "kind", "fact", "planted value"]))


def _short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _assistant(args: argparse.Namespace) -> int:
    from memory import assistant
    from memory.ops import lab
    from memory.prompt_lab.sources import llm_for
    from memory.settings import Settings

    ctx = context(args) if args.apply is not None else None
    if ctx is None:  # nothing stored is read: no storage opened
        model = llm_for(Settings())  # the edge reads the settings
        proposal = assistant.propose(args.description, bank_type=args.type, model=model)
        if args.json:
            emit_json(proposal)
        else:
            _say_proposal(proposal)
            say("\nnothing changed: add --apply BANK to accept it on a bank")
        return 0
    request = lab.ProposeRequest(description=args.description, type=args.type, bank=args.apply)
    proposal = lab.propose(ctx, request)
    updated = lab.accept(ctx, args.apply, proposal)
    if args.json:
        emit_json({"proposal": proposal, "bank": updated})
    else:
        _say_proposal(proposal)
        say(f"\napplied to bank {updated.name!r}:")
        for field in ("compaction_prompt", "max_tokens", "max_turns", "retention_days"):
            say(f"  {field:18} {_shown(getattr(updated, field))}")
    return 0


def _say_proposal(proposal: Proposal) -> None:
    say(f"proposal ({proposal.assistant}):")
    say(f"  bank type          {proposal.bank_type}")
    say(f"  compaction_prompt  {proposal.compaction_prompt}")
    say(f"  max_tokens         {_shown(proposal.max_tokens)}")
    say(f"  max_turns          {_shown(proposal.max_turns)}")
    days = proposal.retention_days
    say(f"  retention          {f'{days} days' if days else 'indefinite'}")
    if proposal.mode:
        say(f"  mode               {proposal.mode} (fixed at creation)")
    say("why:")
    for line in proposal.rationale:
        say(f"  - {line}")


def _shown(value: object) -> str:
    if value is None:
        return "none"
    return f"{value:,}" if isinstance(value, int) else str(value)
