"""The field rules of memory.types over REST: a refused value is a 400 that names it, and
nothing is written."""

from __future__ import annotations

from api_support import Api

from memory import banks


def test_a_bool_retention_is_400_and_no_bank_is_made(api: Api) -> None:
    with api.as_acme() as http:
        made = http.post(
            "/memory_banks", json={"name": "n", "type": "general", "retention_days": True}
        )
    assert made.status_code == 400, made.text
    assert "retention_days must be a whole number, not true" in made.json()["error"]["message"]
    assert banks.list_banks(api.ctx("acme")) == []


def test_nan_metadata_is_400_and_nothing_is_written(api: Api) -> None:
    with api.as_acme() as http:
        bank = http.post("/memory_banks", json={"name": "n", "type": "general"}).json()["id"]
        body = b'{"key": "k", "content": "c", "metadata": {"x": NaN}}'
        wrote = http.post(
            f"/memory_banks/{bank}/entries",
            content=body,
            headers={"Content-Type": "application/json"},
        )
    assert wrote.status_code == 400, wrote.text
    assert "NaN or Infinity" in wrote.json()["error"]["message"]
