"""The ingest and export flows run as real flows, publishing artifacts of their counts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from flow_support import artifact_table

from memory import banks
from memory.context import Context
from memory.models import BankCreate
from memory.store.lance import LanceStore
from memory.testing import HashingEmbedder

FIXTURES = Path(__file__).parents[1] / "fixtures" / "ingest"


def test_ingest_and_export_flows(prefect_api: None, tmp_path: Path) -> None:
    from flows.export import export_flow
    from flows.ingest import ingest_flow

    data = str(tmp_path / "db")
    writer = Context(
        store=LanceStore(data), account="acme", embedder=lambda m: HashingEmbedder(m.dims)
    )
    banks.create(writer, BankCreate(name="support", type="conversation"))
    source = tmp_path / "conversation.jsonl"
    shutil.copy(FIXTURES / "conversation.jsonl", source)

    report = ingest_flow(bank="support", paths=[str(source)], data=data, account="acme")

    assert (report.stored, report.rejected) == (4, 8)
    (row, total) = artifact_table("membank-ingest").rows
    assert total == {
        "file": "total (1 file)",
        "rows": 12,
        "stored": 4,
        "already present": 0,
        "rejected": 8,
        "rejects file": "",
    }
    assert row["rejects file"] == f"{source}.rejects.jsonl"

    out = tmp_path / "support.json"
    result = export_flow(
        bank="support",
        export_format="json",
        out=str(out),
        speaker="bob",
        data=data,
        account="acme",
    )

    assert result.entries == 2
    assert len(json.loads(out.read_text("utf-8"))["entries"]) == 2
    assert {"item": "entries", "value": "2"} in artifact_table("membank-export").rows
