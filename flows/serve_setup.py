"""Prepare a running Prefect API for membank: work pool, `llm` limit, prefect.yaml deployments.

Run by `membank serve` once the server is healthy, in one process so Prefect is imported
once: `python -m flows.serve_setup --pool membank --llm-limit 2` (in the project folder).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate
from prefect.exceptions import ObjectNotFound

from flows.compaction_sweep import LLM_TAG


async def prepare(pool: str, llm_limit: int) -> None:
    """Create the process work pool (if missing) and set the LLM concurrency limit."""
    async with get_client() as client:
        try:
            await client.read_work_pool(pool)
        except ObjectNotFound:
            await client.create_work_pool(WorkPoolCreate(name=pool, type="process"))
        await client.create_concurrency_limit(tag=LLM_TAG, concurrency_limit=llm_limit)


def deploy(pool: str) -> int:
    """Deploy every deployment of ./prefect.yaml onto `pool`; returns the CLI's exit code."""
    from prefect.cli import app

    sys.argv = ["prefect", "--no-prompt", "deploy", "--all", "--pool", pool]
    try:
        app()
    except SystemExit as done:
        return int(done.code or 0)
    return 0


def main() -> int:
    """Prepare the API and deploy; returns an exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pool", default="membank")
    parser.add_argument("--llm-limit", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(prepare(args.pool, args.llm_limit))
    print(f"work pool {args.pool!r} ready; at most {args.llm_limit} LLM tasks at once")
    return deploy(args.pool)


if __name__ == "__main__":
    raise SystemExit(main())
