"""`python -m flows.cli`: the `membank` command, as before (the console script is
`memory.cli:run`; `flows.commands` adds `demo` and `serve` and `lab.command` adds `lab`
through the `membank.commands` entry points, so the core never imports Prefect code).
"""

from __future__ import annotations

from collections.abc import Sequence

from memory import cli
from memory.cli.args import ContextFactory, open_storage


def main(argv: Sequence[str] | None = None, *, context: ContextFactory = open_storage) -> int:
    """Run the membank command line (on the contexts `context` returns); returns the exit code."""
    return cli.main(argv, context=context)


def run() -> None:
    """Console-script entry point."""
    raise SystemExit(main())


if __name__ == "__main__":
    run()
