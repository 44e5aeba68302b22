"""`Seclai-Version` gating over HTTP: retention defaults and max_age_days exactly as SPEC."""

from __future__ import annotations

import pytest
from api_support import Api

from memory import banks

OLD = "2026-01-15"
CURRENT = "2026-08-03"
LATER = "2026-10-01"


def _create(api: Api, version: str | None, **fields: object):  # type: ignore[no-untyped-def]
    headers = {} if version is None else {"Seclai_Version": version}
    with api.as_acme() as http:
        if version is None:
            http.headers.pop("Seclai-Version")
        else:
            http.headers.update({"Seclai-Version": version})
        return http.post("/memory_banks", json=fields, headers=headers)


@pytest.mark.parametrize(
    ("version", "echoed", "conversation", "general"),
    [
        (None, "legacy", 30, 30),
        (OLD, "legacy", 30, 30),
        (CURRENT, CURRENT, 90, None),
        (LATER, CURRENT, 90, None),
    ],
)
def test_retention_default_by_version_and_type(
    api: Api, version: str | None, echoed: str, conversation: int, general: int | None
) -> None:
    conv = _create(api, version, name="c", type="conversation")
    gen = _create(api, version, name="g", type="general")
    assert conv.status_code == gen.status_code == 201, conv.text
    assert conv.headers["Seclai-Version"] == echoed
    assert conv.json()["retention_days"] == conversation
    assert gen.json()["retention_days"] == general
    assert banks.get(api.ctx("acme"), conv.json()["id"]).retention_days == conversation


@pytest.mark.parametrize("version", [None, OLD, CURRENT])
def test_explicit_retention_is_honoured_on_every_version(api: Api, version: str | None) -> None:
    indefinite = _create(api, version, name="c", type="conversation", retention_days=None)
    seven = _create(api, version, name="g", type="general", retention_days=7)
    assert indefinite.json()["retention_days"] is None
    assert seven.json()["retention_days"] == 7


def test_max_age_days_non_zero_is_400_on_current_with_a_pointer_to_retention(api: Api) -> None:
    refused = _create(api, CURRENT, name="c", type="conversation", max_age_days=14)
    assert refused.status_code == 400
    assert "retention_days" in refused.json()["error"]["message"]
    assert banks.list_banks(api.ctx("acme")) == []
    made = _create(api, CURRENT, name="c", type="conversation").json()
    with api.as_acme() as http:
        update = http.put(f"/memory_banks/{made['id']}", json={"max_age_days": 5, "name": "x"})
        cleared = http.put(f"/memory_banks/{made['id']}", json={"max_age_days": 0})
    assert update.status_code == 400
    assert banks.get(api.ctx("acme"), made["id"]).name == "c"
    assert cleared.status_code == 200


def test_max_age_days_is_accepted_and_ignored_on_old_versions(api: Api) -> None:
    for version in (None, OLD):
        made = _create(api, version, name=f"c{version}", type="conversation", max_age_days=120)
        assert made.status_code == 201
        assert made.json()["retention_days"] == 30
        assert "max_age_days" not in made.json()
    zero = _create(api, CURRENT, name="z", type="general", max_age_days=0)
    assert zero.status_code == 201


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "2026-8-3", "2099-01-01", ""])
def test_unknown_or_malformed_version_is_400_on_every_endpoint(api: Api, bad: str) -> None:
    with api.as_acme() as http:
        http.headers["Seclai-Version"] = bad
        created = http.post("/memory_banks", json={"name": "c", "type": "general"})
        listed = http.get("/memory_banks")
    for response in (created, listed):
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_version"
        assert "X-Request-ID" in response.headers
    assert banks.list_banks(api.ctx("acme")) == []
