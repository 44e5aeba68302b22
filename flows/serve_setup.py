"""Prepare a running Prefect API for membank: work pool, `llm` limit, prefect.yaml deployments.

Run by `membank serve` once the server is healthy, in one process so Prefect is imported
once; by hand, in the project folder: `python -m flows.serve_setup --pool membank --llm-limit 2`.
`MEMBANK_PROJECT_DIR` (the folder flow runs start in) defaults to that folder.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate
from prefect.exceptions import ObjectNotFound

from flows.compaction_sweep import LLM_TAG

PROJECT_DIR = Path(__file__).resolve().parent.parent
"""The checkout this module is in (named when prefect.yaml is not in the current folder)."""
PREFECT_FILE = Path("prefect.yaml")


async def prepare(pool: str, llm_limit: int) -> None:
    """Create the process work pool (if missing) and set the LLM concurrency limit."""
    async with get_client() as client:
        try:
            await client.read_work_pool(pool)
        except ObjectNotFound:
            await client.create_work_pool(WorkPoolCreate(name=pool, type="process"))
        await client.create_concurrency_limit(tag=LLM_TAG, concurrency_limit=llm_limit)


def prefect_file_for(pool: str, source: Path, folder: Path) -> Path:
    """Return `source` when every deployment in it is on `pool`, else a copy in `folder`
    with every deployment moved onto `pool`.

    `prefect deploy --all --pool P` ignores `--pool` (it applies to one deployment only), so
    another pool is written into the file the deployments are read from.
    """
    config: dict[str, Any] = yaml.safe_load(source.read_text("utf-8")) or {}
    deployments: list[dict[str, Any]] = config.get("deployments") or []
    if all((d.get("work_pool") or {}).get("name") == pool for d in deployments):
        return source
    for deployment in deployments:
        deployment["work_pool"] = {**(deployment.get("work_pool") or {}), "name": pool}
    target = folder / source.name
    target.write_text(yaml.safe_dump(config, sort_keys=False), "utf-8")
    return target


def deploy(pool: str) -> int:
    """Deploy every deployment of ./prefect.yaml onto `pool`; returns the CLI's exit code."""
    from prefect.cli import app

    with tempfile.TemporaryDirectory(prefix="membank-deploy-") as folder:
        source = prefect_file_for(pool, PREFECT_FILE, Path(folder))
        sys.argv = ["prefect", "--no-prompt", "deploy", "--all", "--prefect-file", str(source)]
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
    if not PREFECT_FILE.is_file():
        sys.stderr.write(
            f"membank: no {PREFECT_FILE} in {Path.cwd()}: run this in the project folder "
            f"(cd {PROJECT_DIR})\n"
        )
        return 2
    # prefect.yaml's pull step names this folder; unset, every run would crash on start.
    project = os.environ.get("MEMBANK_PROJECT_DIR") or str(Path.cwd().resolve())
    os.environ["MEMBANK_PROJECT_DIR"] = project
    asyncio.run(prepare(args.pool, args.llm_limit))
    print(f"work pool {args.pool!r} ready; at most {args.llm_limit} LLM tasks at once")
    print(f"deploying {PREFECT_FILE.resolve()}: flow runs start in {project}")
    return deploy(args.pool)


if __name__ == "__main__":
    raise SystemExit(main())
