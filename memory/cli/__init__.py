"""The `membank` command: a thin layer over the core library.

Exit codes: 0 ok, 1 provider/storage failure, 2 bad input (one-line message on stderr),
3 not found, 4 ingest finished with rejected rows (quarantined). An error of the storage
engine itself (a damaged file) or of the operating system is one line too; MEMBANK_DEBUG=1
shows its traceback. Any other exception is a bug and shows its traceback. Heavy imports
happen inside commands so `membank --help` stays quick.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, Protocol

from pydantic import ValidationError

from memory.cli import (
    agents_cmd,
    api_cmd,
    banks_cmd,
    chat_cmd,
    compaction_cmd,
    data_cmd,
    entries_cmd,
    judge_cmd,
    lab_cmd,
    maintain_cmd,
    mcp_cmd,
    memory_cmd,
)
from memory.cli.args import ContextFactory, open_storage
from memory.errors import Conflict, IngestStopped, InvalidInput, MembankError, NotFound
from memory.types.problems import engine_text, one_line


class CommandModule(Protocol):
    """A module of subcommands: `register` adds them to the parser."""

    def register(self, commands: Any, common: argparse.ArgumentParser) -> None: ...


MODULES: list[CommandModule] = [
    banks_cmd,
    entries_cmd,
    data_cmd,
    compaction_cmd,
    maintain_cmd,
    memory_cmd,
    mcp_cmd,
    judge_cmd,
    lab_cmd,
    chat_cmd,
    agents_cmd,
    api_cmd,
]
"""The core's command modules; more come from the `membank.commands` entry points."""

COMMANDS_GROUP = "membank.commands"
"""The entry-point group of command modules outside the core: the Prefect ones (`demo`,
`serve`, from `flows.commands`), the lab (`lab.command`) and any installed package's. Each
names a module with a `register(commands, common)` like the core's; it is imported when the
parser is built, so it imports its heavy parts inside its handlers."""


def command_modules() -> list[CommandModule]:
    """Return the core's command modules, then those of the `membank.commands` entry points."""
    from importlib.metadata import entry_points

    found: list[CommandModule] = [point.load() for point in entry_points(group=COMMANDS_GROUP)]
    return [*MODULES, *found]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and exit with code 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"membank: error: {message} (see `{self.prog} --help`)\n")
        raise SystemExit(2)


def build_parser(modules: Sequence[CommandModule] | None = None) -> argparse.ArgumentParser:
    """Return the parser of the commands `modules` add (default: `command_modules()`)."""
    # SUPPRESS: a subcommand's unset option must not overwrite the value given before it
    # (`membank --json --data X bank list`); `main` fills the defaults in after parsing.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="machine-readable output on stdout",
    )
    common.add_argument(
        "--data",
        metavar="URI",
        default=argparse.SUPPRESS,
        help="storage URI (default: $MEMBANK_URI or .membank; demo: .membank-demo)",
    )
    parser = _Parser(prog="membank", description="Memory banks for LLM agents.", parents=[common])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in command_modules() if modules is None else modules:
        module.register(commands, common)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    context: ContextFactory = open_storage,
    modules: Sequence[CommandModule] | None = None,
) -> int:
    """Run the membank command line; returns the exit code.

    Args:
        argv: the arguments after `membank` (default: the process's own).
        context: returns the context each command runs on, given its --data value (None
            when not given); tests pass `lambda data: ctx` to run on a context they built.
        modules: the command modules (default: `command_modules()`, the core's and the
            `membank.commands` entry points').

    Returns:
        The exit code (0 ok, 1 failure, 2 bad input, 3 not found, 4 rows rejected).
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    parser = build_parser(modules)
    args, extras = parser.parse_known_args(argv)
    if extras:  # named after the subcommand, whose --help lists what it takes
        words = [w for w in (args.command, getattr(args, "bank_command", None)) if w]
        _Parser(prog=" ".join(["membank", *words])).error(
            f"unrecognized arguments: {' '.join(extras)}"
        )
    args.json = getattr(args, "json", False)
    args.data = getattr(args, "data", None)
    args.context_factory = context
    try:
        code: int = args.handler(args)
        return code
    except (InvalidInput, Conflict) as exc:
        sys.stderr.write(f"membank: error: {exc}\n")
        return 2
    except ValidationError as exc:
        sys.stderr.write(f"membank: error: {one_line(exc)}\n")
        return 2
    except NotFound as exc:
        sys.stderr.write(f"membank: not found: {exc}\n")
        return 3
    except IngestStopped as exc:
        sys.stderr.write(f"membank: {exc}\n")
        return 130 if exc.interrupted else 1
    except MembankError as exc:
        sys.stderr.write(f"membank: failed: {exc}\n")
        return 1
    except BrokenPipeError:  # the reader went away (`membank ... | head`): stop quietly
        _silence_stdout()
        return 141  # 128 + SIGPIPE, as for a command killed by the signal
    except (OSError, RuntimeError, ValueError) as exc:
        if os.environ.get("MEMBANK_DEBUG") or not _from_engine(exc):
            raise  # a bug (or a traceback asked for): shown as it is
        plain = engine_text(exc)
        first = plain.splitlines()[0] if plain else ""
        sys.stderr.write(
            f"membank: failed: {type(exc).__name__}: {first[:300]} "
            "(set MEMBANK_DEBUG=1 for the traceback)\n"
        )
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("membank: interrupted\n")
        return 130


ENGINE_MODULES = ("lancedb", "lance", "pyarrow", "memory.store")
"""Where the storage engine's own errors come from (the store wraps only some of them in
`StorageError`): the engine's packages and the store that calls them."""


def _from_engine(exc: BaseException) -> bool:
    """Return True when `exc` is the operating system's or the storage engine's (its type is
    the engine's, or the engine raised it), not a bug of membank's."""
    if isinstance(exc, OSError):
        return True
    where = [type(exc).__module__]
    frame = exc.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    if frame is not None:
        where.append(str(frame.tb_frame.f_globals.get("__name__", "")))
    return any(
        name == module or name.startswith(f"{module}.")
        for name in where
        for module in ENGINE_MODULES
    )


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the flush at exit does not fail on the closed pipe too."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor behind stdout: nothing to flush
        pass


def run() -> None:
    """Console-script entry point."""
    raise SystemExit(main())
