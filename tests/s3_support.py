"""A local S3 emulator for the object-storage tests: moto's server on 127.0.0.1, one bucket.

Also the entry point of spawned processes that compact on it (so moto and boto3 are imported
only where they are used: a child pays for neither).

Credentials and the endpoint reach LanceDB only through the AWS_* environment variables its
object store reads (never through a URI or storage options), exactly as a deployment would
set them. The keys are moto's dummies: nothing leaves the machine.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.testing import PlainCompleter

__all__ = ["PlainCompleter"]  # moved to memory/testing.py; tests import it here

BUCKET = "membank-test"
REGION = "us-east-1"


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def s3_env(endpoint: str) -> dict[str, str]:
    """Return the environment that points LanceDB's object store (and boto3) at `endpoint`."""
    return {
        "AWS_ACCESS_KEY_ID": "membank-test-key",
        "AWS_SECRET_ACCESS_KEY": "membank-test-secret",
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ENDPOINT": endpoint,
        "AWS_ALLOW_HTTP": "true",
        "AWS_EC2_METADATA_DISABLED": "true",
    }


@dataclass(frozen=True)
class S3:
    """The emulated bucket: where it is, and a boto3 client to look inside."""

    endpoint: str
    bucket: str
    env: Mapping[str, str]

    def client(self) -> Any:
        """Return a boto3 S3 client on the emulator (credentials from `env`)."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"],
        )

    def uri(self, prefix: str) -> str:
        """Return the LanceDB URI of `prefix` in the bucket."""
        return f"s3://{self.bucket}/{prefix}"

    def fresh_prefix(self) -> str:
        """Return a prefix no test has used yet."""
        return f"t-{uuid.uuid4().hex[:12]}"

    def keys(self, prefix: str) -> list[str]:
        """Return the key of every object under `prefix/`."""
        pages = self.client().get_paginator("list_objects_v2")
        found: list[str] = []
        for page in pages.paginate(Bucket=self.bucket, Prefix=f"{prefix}/"):
            found.extend(item["Key"] for item in page.get("Contents", []))
        return found

    def contents(self, prefix: str) -> dict[str, bytes]:
        """Return the bytes of every object under `prefix/`, by key."""
        client = self.client()
        return {
            key: client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
            for key in self.keys(prefix)
        }

    def keys_containing(self, prefix: str, needle: bytes) -> list[str]:
        """Return the keys under `prefix/` whose bytes contain `needle` (every object is read)."""
        return [key for key, data in self.contents(prefix).items() if needle in data]


@contextmanager
def moto_s3(bucket: str = BUCKET) -> Iterator[S3]:
    """Run moto's S3 server on a free local port with one empty bucket; stop it afterwards."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    with atomic_conditional_puts():
        server.start()
        try:
            endpoint = f"http://127.0.0.1:{port}"
            s3 = S3(endpoint=endpoint, bucket=bucket, env=s3_env(endpoint))
            s3.client().create_bucket(Bucket=bucket)
            yield s3
        finally:
            server.stop()


@contextmanager
def atomic_conditional_puts() -> Iterator[None]:
    """Make moto's conditional PutObject atomic, as it is on S3.

    Lance commits a table version by creating its manifest with `If-None-Match: *`: of two
    writers racing for one version, S3 lets exactly one create it. moto 5.2 checks the
    header and then stores the object in two steps, on a server thread per request, with no
    lock between them, so two racing creates could both succeed there (a lost commit the
    real service never produces). One PutObject at a time closes that gap.
    """
    from moto.s3.responses import S3Response

    original = S3Response.put_object
    guard = threading.Lock()

    def put_object(self: S3Response) -> Any:
        with guard:
            return original(self)

    S3Response.put_object = put_object  # type: ignore[method-assign]
    try:
        yield
    finally:
        S3Response.put_object = original  # type: ignore[method-assign]


GATE_SECONDS = 120.0


def warm_up(_: int) -> None:
    """Import what the spawned writers and compactions use (a pool warms up with this)."""
    from spawned import _cache_bytecode

    _cache_bytecode()
    import compaction_support  # noqa: F401

    import memory.compaction  # noqa: F401


def compact_at_gate(
    uri: str, account: str, bank_id: str, keys: Sequence[str], gate: str, worker: int
) -> list[str]:
    """Compact each partition of `keys` once every worker is ready; returns the statuses.

    Each worker marks itself ready in the folder `gate` and waits for the two of them, so
    both processes compact the same partitions at the same moment.
    """
    from spawned import _cache_bytecode

    _cache_bytecode()
    import compaction_support

    from memory import banks
    from memory.compaction.apply import compact_partition

    ctx = compaction_support.worker_context(uri, account)
    ctx.completer = PlainCompleter
    bank = banks.get(ctx, bank_id)
    folder = Path(gate)
    (folder / f"ready-{worker}").touch()
    deadline = time.monotonic() + GATE_SECONDS
    while len(list(folder.glob("ready-*"))) < 2:
        if time.monotonic() > deadline:
            raise TimeoutError("the other compacting process never got ready")
        time.sleep(0.01)
    return [compact_partition(ctx, bank, key).status for key in keys]
