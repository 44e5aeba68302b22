"""The `membank` console script: the core library's commands plus the Prefect ones.

`memory.cli` holds every command that needs only the core library; `flows.commands` adds
`demo` and `serve` and `lab.command` adds `lab`, so the core never imports Prefect code.
"""

from __future__ import annotations

from collections.abc import Sequence

from flows import commands
from lab import command as lab_command
from memory import cli
from memory.cli.args import ContextFactory, open_storage


def main(argv: Sequence[str] | None = None, *, context: ContextFactory = open_storage) -> int:
    """Run the membank command line (on the contexts `context` returns); returns the exit code."""
    return cli.main(argv, context=context, modules=[*cli.MODULES, commands, lab_command])


def run() -> None:
    """Console-script entry point."""
    raise SystemExit(main())


if __name__ == "__main__":
    run()
