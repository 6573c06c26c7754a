"""The OpenAPI document: served, committed, complete (every route, described, with examples)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from fastapi.routing import iter_route_contexts

from engine import Vault
from engine.api.app import create_app
from engine.api.openapi import render, schema
from tests.engine.api.conftest import PORT

COMMITTED = Path(__file__).resolve().parents[3] / "docs" / "openapi.json"
REGENERATE = "python -m engine.api.openapi > docs/openapi.json"


def served(client: httpx.Client, auth: dict[str, str]) -> dict[str, Any]:
    response = client.get("/openapi.json", headers=auth)
    assert response.status_code == 200
    return dict(response.json())


def test_the_committed_document_is_current(client: httpx.Client, auth: dict[str, str]) -> None:
    generated = render(schema())
    assert COMMITTED.exists(), f"docs/openapi.json is missing; create it with `{REGENERATE}`"
    committed = COMMITTED.read_text(encoding="utf-8")
    assert committed == generated, (
        f"docs/openapi.json is out of date with the routes; regenerate it with `{REGENERATE}` and commit the result"
    )
    assert served(client, auth) == json.loads(committed)  # what clients get is what is committed


def test_every_route_is_documented(vault: Vault) -> None:
    document = schema()
    app = create_app(vault, token=vault.endpoint_token(), port=PORT)
    for context in iter_route_contexts(app.routes):
        if context.path == "/openapi.json":
            continue
        path = context.path.replace(":path}", "}")
        assert path in document["paths"], path
        for method in (context.methods or {"POST"}) - {"HEAD"}:
            assert method.lower() in document["paths"][path], f"{method} {path}"


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method, path, operation) for path, item in document["paths"].items() for method, operation in item.items()]


def resolve(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    options = [n for n in node.get("anyOf", []) if "$ref" in n]  # an optional body
    if options:
        node = options[0]
    ref = node.get("$ref")
    if ref is None:
        return node
    kind, name = ref.split("/")[-2:]
    return dict(document["components"][kind][name])


def test_every_operation_is_described_with_examples() -> None:
    document = schema()
    assert len(operations(document)) >= 52  # 51 REST operations and MCP
    for method, path, operation in operations(document):
        where = f"{method.upper()} {path}"
        assert operation.get("summary") and operation.get("description"), where
        body = operation.get("requestBody")
        if body is not None:
            media = body["content"]["application/json"]
            model = resolve(document, media["schema"])
            assert "examples" in model or "example" in media, f"{where}: no request example"
            for name, prop in model.get("properties", {}).items():
                assert prop.get("description") or "$ref" in prop, f"{where}: {name} undescribed"
        for status, response in operation["responses"].items():
            response = resolve(document, response)
            assert response.get("description"), f"{where} {status}"
            content = response.get("content", {})
            if status.startswith("2") and "application/json" in content:
                model = resolve(document, content["application/json"]["schema"])
                assert "examples" in model, f"{where} {status}: no response example"
            if not status.startswith("2") and path != "/mcp":
                assert content["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}, (
                    f"{where} {status}: not the endpoint's error shape"
                )


#: The one kind of 422 the endpoint answers: a well-formed upload whose file cannot be parsed.
QUARANTINING = {
    ("post", "/v6/documents"),
    ("post", "/v6/documents/quarantine/{quarantine_id}/retry"),
}


def test_errors_are_documented_as_the_endpoint_sends_them() -> None:
    document = schema()
    assert "HTTPValidationError" not in document["components"]["schemas"]
    for method, path, operation in operations(document):
        responses = operation["responses"]
        if (method, path) in QUARANTINING:
            assert "document_quarantined" in responses["422"]["description"]
        else:
            assert "422" not in responses, f"{method} {path}: Cairn answers validation with 400"
        if path == "/mcp":
            continue
        assert {"421", "403", "429", "500"} <= set(responses)
        assert ("401" in responses) == ((method, path) != ("get", "/v6/health"))
        if method in ("post", "patch", "delete"):
            assert {"413", "415"} <= set(responses)
    stream = document["paths"]["/v6/events/stream"]["get"]["responses"]["200"]["content"]
    assert "event: connected" in stream["text/event-stream"]["example"]


def test_the_upload_takes_multipart_or_json_and_says_what_each_status_means() -> None:
    document = schema()
    upload = document["paths"]["/v6/documents"]["post"]
    content = upload["requestBody"]["content"]
    form = content["multipart/form-data"]["schema"]
    assert form["required"] == ["file"] and form["properties"]["file"]["format"] == "binary"
    assert set(form["properties"]) == {
        "file",
        "document_id",
        "collection_id",
        "project_id",
        "user_id",
    }
    body = resolve(document, content["application/json"]["schema"])
    assert {"name", "content", "path"} <= set(body["properties"])
    assert {"200", "201", "404", "413", "415", "422"} <= set(upload["responses"])
    assert "201" in upload["description"] and "422" in upload["description"]
    rescan = document["paths"]["/v6/watch/rescan"]["post"]["responses"]
    assert rescan["202"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/RescanOut"}
