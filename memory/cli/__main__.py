"""`python -m memory.cli ...`: the `membank` command."""

from memory.cli import run

run()
