"""`membank judge`: score a summary written elsewhere against the entries it summarizes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.cli.args import context, positive
from memory.cli.output import emit_json, say, table
from memory.errors import InvalidInput

if TYPE_CHECKING:
    from memory.judge import Evaluation


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the `judge` command."""
    judge = commands.add_parser(
        "judge",
        parents=[common],
        help="score a summary against its source entries (heuristic judge offline, or an LLM)",
    )
    source = judge.add_mutually_exclusive_group(required=True)
    source.add_argument("--bank", metavar="BANK", help="judge against this bank's entries")
    source.add_argument(
        "--pasted",
        metavar="FILE",
        help='entries in a file: JSON lines {"speaker", "role", "content"} or "speaker: text"',
    )
    judge.add_argument("--key", help="with --bank: only this partition's entries")
    judge.add_argument(
        "--type",
        choices=["conversation", "general"],
        help="with --pasted: the entries' bank type (default conversation: speaker: text)",
    )
    judge.add_argument("--summary", metavar="FILE", required=True, help="the summary to judge")
    judge.add_argument(
        "--prompt", help="the prompt the summary was written for (default: the bank's)"
    )
    judge.add_argument(
        "--judge",
        metavar="MODEL",
        help="a litellm model name (default: $MEMBANK_JUDGE_MODEL, the offline heuristic judge)",
    )
    judge.add_argument(
        "--runs", type=positive, default=1, help="judge N times; mean and spread per criterion"
    )
    judge.set_defaults(handler=_judge)


def _judge(args: argparse.Namespace) -> int:
    from memory.ops import lab

    if args.key is not None and args.bank is None:
        raise InvalidInput("--key needs --bank: it names a partition of the bank's entries")
    if args.type is not None and args.bank is not None:
        raise InvalidInput("--type is for --pasted: a bank has its own type")
    summary = _read("--summary", args.summary)
    if not summary.strip():
        raise InvalidInput(f"--summary {args.summary}: the file is empty; give the summary text")
    pasted = _read("--pasted", args.pasted) if args.pasted is not None else None
    request = lab.JudgeRequest(
        summary=summary,
        bank=args.bank,
        key=args.key,
        pasted=pasted,
        bank_type=args.type or "conversation",
        prompt=args.prompt,
        judge_model=args.judge,
        runs=args.runs,
    )
    ctx = context(args)
    try:
        result = lab.judge(ctx, request)
    except InvalidInput as exc:
        if pasted is None or args.bank is not None:
            raise
        raise InvalidInput(f"--pasted {args.pasted}: {exc}") from None
    if args.json:
        emit_json(result)
    else:
        say(_text(result))
    return 0


def _read(flag: str, name: str) -> str:
    """Return a UTF-8 text file's contents; InvalidInput names the flag when it cannot."""
    path = Path(name).expanduser()
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "does not exist"
        raise InvalidInput(f"{flag} {name}: the file {what}; give the path of a text file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{flag} {name}: not UTF-8 text (byte {exc.start}): re-encode it"
        ) from exc
    except OSError as exc:
        raise InvalidInput(f"{flag} {name}: cannot be read ({exc.strerror})") from exc


def _text(result: Evaluation) -> str:
    """Return the evaluation as terminal text: label, criteria with reasons, overall, flags."""
    head = (
        f"judge: {result.judge}; runs: {result.runs}; the summary is "
        f"{result.compression_ratio:.0%} of the source's tokens"
    )
    if not result.offline:
        head += f"; judge tokens: {result.cost_tokens}"
    rows = []
    for item in result.criteria:
        score = "error" if item.error else f"{item.score:.2f}"
        spread = [f"±{item.spread:.2f}" if not item.error else ""] if result.runs > 1 else []
        rows.append((item.name, score, *spread, item.error or item.reason))
    headers = ["criterion", "score", *(["spread"] if result.runs > 1 else []), "reason"]
    lines = [head, table(rows, headers), f"overall: {result.overall:.2f}"]
    if result.flags:
        lines.append("flags:\n" + "\n".join(f"  {flag}" for flag in result.flags))
    return "\n".join(lines)
