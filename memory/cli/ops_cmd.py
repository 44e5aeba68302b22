"""`membank demo`: the main job on the embedded defaults."""

from __future__ import annotations

import argparse
from typing import Any


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the demo command."""
    demo = commands.add_parser(
        "demo", parents=[common], help="run the main job on embedded defaults"
    )
    demo.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    from memory.demo import run_demo

    return run_demo(args.data or ".membank-demo", as_json=args.json)
