"""Helpers of the flow tests: reading back the artifacts flows publish."""

from __future__ import annotations


def artifact_markdown(key: str) -> str:
    """Return the markdown of the newest artifact with `key`."""
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
    return str(found[0].data)
