"""`membank judge`: score a summary written elsewhere against the entries it summarizes."""

from __future__ import annotations

import argparse
import json
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
    from memory import banks, entries
    from memory.config import get_mode
    from memory.judge import evaluate
    from memory.prompts import entry_line

    if args.key is not None and args.bank is None:
        raise InvalidInput("--key needs --bank: it names a partition of the bank's entries")
    summary = _read("--summary", args.summary)
    if not summary.strip():
        raise InvalidInput(f"--summary {args.summary}: the file is empty; give the summary text")
    ctx = context(args)
    prompt = args.prompt
    if args.bank is not None:
        bank = banks.get(ctx, args.bank)
        found = entries.load(ctx, bank, args.key) if args.key else entries.read(ctx, bank)
        if not found:
            where = f" under key {args.key!r}" if args.key else ""
            raise InvalidInput(
                f"bank {bank.name!r} has no entries{where}: nothing to judge against"
            )
        source = [entry_line(e.content, e.speaker) for e in found]
        prompt = prompt if prompt is not None else bank.compaction_prompt
        mode = banks.mode_of(bank)
    else:
        source = _source_lines(args.pasted, _read("--pasted", args.pasted))
        mode = get_mode("balanced")
    result = evaluate(
        source,
        summary,
        prompt=prompt,
        judge_model=args.judge or ctx.settings.judge_model,
        runs=args.runs,
        embedder=ctx.embedder(mode),
        settings=ctx.settings,
    )
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


def _source_lines(name: str, text: str) -> list[str]:
    """Return pasted entries as "speaker: text" lines: JSON lines or plain lines, one each.

    A line starting with `{` is a JSON object with "content" and optionally "speaker" or
    "role" (the speaker shown is the speaker, else the role); any other non-empty line is
    taken as it is ("speaker: text" or plain text).

    Raises:
        InvalidInput: a JSON line that is not an object with a text "content", or no entries.
    """
    from memory.prompts import entry_line

    lines: list[str] = []
    for number, row in enumerate(text.splitlines(), start=1):
        if not row.strip():
            continue
        if not row.lstrip().startswith("{"):
            lines.append(row.strip())
            continue
        try:
            item = json.loads(row)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"--pasted {name} line {number}: invalid JSON ({exc.msg})") from exc
        content = item.get("content") if isinstance(item, dict) else None
        if not isinstance(content, str) or not content.strip():
            raise InvalidInput(
                f'--pasted {name} line {number}: a JSON line needs a text "content" field'
            )
        speaker = item.get("speaker") or item.get("role")
        lines.append(entry_line(content, str(speaker) if speaker else None))
    if not lines:
        raise InvalidInput(f"--pasted {name}: the file holds no entries")
    return lines


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
