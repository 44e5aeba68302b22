"""Helpers of the flow tests: reading back the tables flows publish."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Published:
    """A table artifact as a flow published it."""

    rows: list[dict[str, Any]]
    description: str


def artifact_table(key: str) -> Published:
    """Return the rows and description of the newest table artifact with `key`."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])),
            sort=ArtifactSort.CREATED_DESC,
            limit=1,
        )
    assert found, f"no artifact {key}"
    (artifact,) = found
    assert artifact.type == "table"
    return Published(rows=json.loads(str(artifact.data)), description=artifact.description or "")
