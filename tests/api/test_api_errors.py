"""Errors are JSON `{"error": {"code", "message"}}` with the right status, say what to fix,
and never leak internals; every response carries an X-Request-ID."""

from __future__ import annotations

import re

from api_support import Api

from memory import banks
from memory.errors import Invalid
from memory.types.fields import check_label


def _error(response) -> dict:  # type: ignore[no-untyped-def, type-arg]
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    return body["error"]  # type: ignore[no-any-return]


def test_request_shape_errors_are_422_naming_the_field_without_internals(api: Api) -> None:
    with api.as_acme() as http:
        cases = {
            "missing": http.post("/memory_banks", json={"type": "general"}),
            "extra": http.post("/memory_banks", json={"name": "n", "type": "general", "x": 1}),
            "type": http.post("/memory_banks", json={"name": "n", "type": "diary"}),
            "int": http.post("/memory_banks", json={"name": "n", "max_turns": "lots"}),
            "json": http.post(
                "/memory_banks", content=b"{not json", headers={"Content-Type": "application/json"}
            ),
            "query": http.get("/memory_banks", params={"type": "diary"}),
        }
    for name, response in cases.items():
        assert response.status_code == 422, name
        message = _error(response)["message"]
        assert "pydantic" not in message and "http" not in message and "{" not in message, name
    assert "'name' is required" in _error(cases["missing"])["message"]
    assert "'x' is not a field here" in _error(cases["extra"])["message"]
    assert "'type'" in _error(cases["type"])["message"]
    assert "'max_turns'" in _error(cases["int"])["message"]
    assert "not valid JSON" in _error(cases["json"])["message"]
    assert "query field 'type'" in _error(cases["query"])["message"]
    assert banks.list_banks(api.ctx("acme")) == []


def test_bad_input_is_400_with_the_core_message(api: Api) -> None:
    with api.as_acme() as http:
        blank = http.post("/memory_banks", json={"name": "  ", "type": "general"})
        retention = http.post(
            "/memory_banks", json={"name": "n", "type": "general", "retention_days": 0}
        )
        mode = http.post("/memory_banks", json={"name": "n", "type": "general", "mode": "warp"})
        http.post("/memory_banks", json={"name": "taken", "type": "general"})
        taken = http.post("/memory_banks", json={"name": "taken", "type": "general"})
    assert blank.status_code == 400 and _error(blank)["code"] == "invalid_input"
    assert retention.status_code == 400 and "retention_days" in _error(retention)["message"]
    assert mode.status_code == 400 and "warp" in _error(mode)["message"]
    assert taken.status_code == 409 and "already exists" in _error(taken)["message"]
    assert [b.name for b in banks.list_banks(api.ctx("acme"))] == ["taken"]


def test_a_body_over_the_limit_is_413_and_nothing_is_written(api: Api) -> None:
    with api.as_acme() as http:
        bank = http.post("/memory_banks", json={"name": "n", "type": "general"}).json()["id"]
        big = {"key": "k", "content": "x" * 400_000}
        declared = http.post(f"/memory_banks/{bank}/entries", json=big)

        def chunks():  # type: ignore[no-untyped-def]
            yield b'{"key": "k", "content": "'
            for _ in range(40):
                yield b"y" * 10_000
            yield b'"}'

        streamed = http.post(
            f"/memory_banks/{bank}/entries",
            content=chunks(),
            headers={"Content-Type": "application/json"},
        )
        thread = http.get(f"/memory_banks/{bank}/entries", params={"key": "k"}).json()
    for response in (declared, streamed):
        assert response.status_code == 413
        assert "bytes" in _error(response)["message"]
    assert thread["total"] == 0


def test_request_id_is_echoed_when_sane_and_made_otherwise(api: Api) -> None:
    with api.as_acme() as http:
        echoed = http.get("/memory_banks", headers={"X-Request-ID": "abc-123"})
        insane = http.get("/memory_banks", headers={"X-Request-ID": "a b<script>"})
        made = http.get("/memory_banks")
        failed = http.get("/memory_banks/nope", headers={"X-Request-ID": "r-1"})
    assert echoed.headers["X-Request-ID"] == "abc-123"
    assert insane.headers["X-Request-ID"] not in ("", "a b<script>")
    assert len(made.headers["X-Request-ID"]) == 32
    assert failed.status_code == 404 and failed.headers["X-Request-ID"] == "r-1"


def test_unknown_routes_and_methods_are_json_errors(api: Api) -> None:
    with api.as_acme() as http:
        route = http.get("/no/such/thing")
        method = http.patch("/memory_banks/templates")
    assert route.status_code == 404 and "no such endpoint" in _error(route)["message"]
    assert method.status_code == 405 and "PATCH" in _error(method)["message"]
    assert method.headers["Allow"] == "GET"  # the template path, not /{bank_id}
    with api.as_acme() as http:
        bank = http.patch("/memory_banks")
    assert bank.headers["Allow"] == "GET, POST"


def test_openapi_declares_the_key_scheme_and_response_models(api: Api) -> None:
    with api.as_acme() as http:
        spec = http.get("/openapi.json").json()
    schemes = spec["components"]["securitySchemes"]
    assert schemes["APIKeyHeader"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": schemes["APIKeyHeader"]["description"],
    }
    get_bank = spec["paths"]["/memory_banks/{bank_id}"]["get"]
    assert get_bank["security"] == [{"APIKeyHeader": []}]
    assert get_bank["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Bank"
    }
    assert "404" in get_bank["responses"] and "401" in get_bank["responses"]


def test_openapi_links_a_create_to_its_reads_and_a_job_start_to_its_job(api: Api) -> None:
    with api.as_acme() as http:
        spec = http.get("/openapi.json").json()
    paths = spec["paths"]
    ids = {op["operationId"] for item in paths.values() for op in item.values()}
    created = paths["/memory_banks"]["post"]["responses"]["201"]["links"]
    written = paths["/memory_banks/{bank_id}/entries"]["post"]["responses"]["201"]["links"]
    compact = paths["/memory_banks/{bank_id}/compact"]["post"]["responses"]["202"]["links"]
    assert {"GetBank", "UpdateBank", "WriteEntry", "DeleteBank"} <= set(created)
    assert written["ForgetEntry"]["parameters"] == {
        "bank_id": "$response.body#/bank_id",
        "entry_id": "$response.body#/id",
    }
    assert compact["GetJob"]["parameters"] == {"job_id": "$response.body#/id"}
    every = [
        link
        for item in paths.values()
        for op in item.values()
        for answer in op["responses"].values()
        for link in answer.get("links", {}).values()
    ]
    assert every and all(link["operationId"] in ids for link in every)
    # the validated ranges are in the document, so generated requests can be valid
    mode = spec["components"]["schemas"]["BankCreate"]["properties"]["mode"]["anyOf"][0]
    assert "balanced" in mode["enum"]


def test_openapi_states_the_label_and_text_rules_the_validators_check(api: Api) -> None:
    """The documented patterns of names, keys and text accept what the API accepts (so the
    stateful phase makes banks and entries it can follow links of), and refuse the rest."""
    with api.as_acme() as http:
        spec = http.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    name = schemas["BankCreate"]["properties"]["name"]
    content = schemas["EntryWrite"]["properties"]["content"]
    samples = ["ok", "a b", "名前 7", "", " ", "\t", "a\tb", "x\x85", "\x00x", "line\n", " x "]
    for sample in samples:
        try:
            check_label("name", sample, name["maxLength"])
            valid = True
        except Invalid:
            valid = False
        assert bool(re.fullmatch(name["pattern"], sample)) == valid, repr(sample)
        blank_or_nul = not sample.strip() or "\x00" in sample
        assert bool(re.fullmatch(content["pattern"], sample)) != blank_or_nul, repr(sample)
    assert schemas["BankCreate"]["anyOf"][0]["required"] == ["type"]
    created = spec["paths"]["/memory_banks"]["post"]["responses"]["201"]["links"]
    assert created["ExportBank"]["requestBody"]["resource_id"] == "$response.body#/id"
