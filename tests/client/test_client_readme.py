"""The README's "Python client" example (the seed's curl examples as client calls) runs as
shown against a live server, only the host replaced."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from api_support import Api

from memory.client import Client

README = Path(__file__).resolve().parents[2] / "README.md"
HOST = "http://127.0.0.1:8000"

pytestmark = pytest.mark.server


def _example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Python client\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```py\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the Python client section has one example"
    return str(blocks[0])


def test_the_python_client_example_runs(
    api: Api, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    example = _example()
    assert HOST in example
    monkeypatch.setenv("SECLAI_API_KEY", api.acme_key)
    exec(compile(example.replace(HOST, api.url), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "customer-1: My order #88213 arrived with a cracked tank." in out.splitlines()[0]
    assert "2 entries" in out
    with Client(api.url, api.acme_key) as client:
        assert list(client.banks.list()) == []  # the example's last call deleted its bank
