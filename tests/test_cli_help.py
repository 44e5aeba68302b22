"""Every argument of every `membank` command says what it is in `--help`."""

from __future__ import annotations

import argparse

from flows import commands
from lab import command as lab_command
from memory import cli


def _undocumented(parser: argparse.ArgumentParser, path: str) -> list[str]:
    missing: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                missing += _undocumented(sub, f"{path} {name}")
        elif action.help is None and not isinstance(action, argparse._HelpAction):
            missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    return missing


def test_every_argument_has_help() -> None:
    parser = cli.build_parser([*cli.MODULES, commands, lab_command])
    assert _undocumented(parser, "membank") == []
