"""The membank commands that run Prefect: `demo` (the main job, its sweeps as flow runs) and
`serve` (a local server, a worker and the deployments). Prefect is imported only when one runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from memory.cli.args import pool_name, port_number, positive


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the demo and serve commands."""
    demo = commands.add_parser(
        "demo", parents=[common], help="run the main job on embedded defaults"
    )
    demo.set_defaults(handler=_demo)

    serve = commands.add_parser(
        "serve",
        parents=[common],
        help="start a local Prefect server, a worker and the deployments (Ctrl-C stops all)",
    )
    serve.add_argument("--port", type=port_number, default=4200, help="Prefect API port (1-65535)")
    serve.add_argument("--pool", type=pool_name, default="membank", help="process work pool name")
    serve.add_argument(
        "--llm-limit", type=positive, default=2, help="LLM task runs at once, across flows"
    )
    serve.set_defaults(handler=_serve)


def _demo(args: argparse.Namespace) -> int:
    from flows.demo import run_demo

    return run_demo(args.data or ".membank-demo", as_json=args.json)


def _serve(args: argparse.Namespace) -> int:
    from flows.serve import serve
    from memory.settings import Settings, checked_uri

    data = checked_uri(args.data, Settings())  # a bad path is exit 2 before anything starts
    return serve(port=args.port, pool=args.pool, llm_limit=args.llm_limit, data=data)
