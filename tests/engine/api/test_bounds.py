"""Integers out of range, on every route and every MCP tool: the client's 400, never the server's 500.

SQLite stores signed 64-bit integers; an id of 2**63 handed to a query makes the driver raise ``OverflowError``,
which the endpoint could only answer as its own failure.  These tests do not list the routes: they walk the app
(its FastAPI routes, each route's parameters and request bodies as the app's own OpenAPI document describes them)
and the MCP server's tool list, and send every integer they find values no vault can hold.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi.routing import APIRoute, iter_route_contexts
from mcp import Client

from engine.api.models.common import MAX_SQL_INTEGER, SQL_INTEGER_LIMIT
from tests.engine.api.conftest import Served, assert_error, table_counts
from tests.engine.api.test_mcp import connect, text_of

#: Numbers no id can be: past SQLite's INTEGER, below the first id, and far past both.
OUT_OF_RANGE = (2**63, -1, 10**30)
#: What a URL may carry instead of a whole number.
MALFORMED_IN_URL = ("abc", "1.5")
#: What a JSON body or an MCP call may carry instead of a whole number.
MALFORMED_IN_JSON: tuple[Any, ...] = (1.5, "abc")

#: Arguments a tool needs besides its required ones for the integer to be what decides the answer.
MCP_BASE_ARGUMENTS: dict[str, dict[str, Any]] = {"upload_document": {"name": "bounds.md", "content": "# Bounds"}}


@dataclass(frozen=True)
class Probe:
    """One request: a route with one integer replaced by a bad value."""

    method: str
    path: str
    name: str  # the parameter or body field that carries the bad value
    value: Any
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    json: Any = None
    form: dict[str, str] | None = None

    def __str__(self) -> str:
        return f"{self.method} {self.path} {self.name}={self.value!r}"


def is_integer(schema: dict[str, Any]) -> bool:
    """Whether a JSON schema takes an integer (alone, or as an option of ``anyOf``)."""
    if schema.get("type") == "integer":
        return True
    return any(is_integer(option) for option in schema.get("anyOf", []))


def is_integer_list(schema: dict[str, Any]) -> bool:
    options = [schema, *schema.get("anyOf", [])]
    return any(option.get("type") == "array" and is_integer(option.get("items", {})) for option in options)


def resolve(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a ``$ref`` (or an optional body's ``anyOf`` of one) followed."""
    refs = [option for option in node.get("anyOf", []) if "$ref" in option]
    if refs:
        node = refs[0]
    ref = node.get("$ref")
    if ref is None:
        return node
    return dict(document["components"]["schemas"][ref.rsplit("/", 1)[-1]])


def minimal(schema: dict[str, Any]) -> dict[str, Any]:
    """A valid body for a model schema: its first example, or its required fields filled in."""
    examples = schema.get("examples")
    if examples:
        return dict(copy.deepcopy(examples[0]))
    return dict.fromkeys(schema.get("required", []), "x")


def operations(served: Served) -> Iterator[tuple[str, str, str, dict[str, Any], dict[str, Any]]]:
    """Every (method, route path, OpenAPI path, operation, document) of the app's FastAPI routes."""
    app = served.server.app
    document = app.openapi()
    routes = [route for route in iter_route_contexts(app.routes) if isinstance(route.original_route, APIRoute)]
    assert len(routes) > 40  # the walk sees the whole app
    for route in routes:
        assert route.path is not None and route.methods is not None
        openapi_path = route.path.replace(":path}", "}")
        for method in sorted(route.methods - {"HEAD"}):
            yield method, route.path, openapi_path, document["paths"][openapi_path][method.lower()], document


def url_for(openapi_path: str, parameters: list[dict[str, Any]], bad: str | None = None, value: str = "") -> str:
    """The path with every path parameter filled (1 for integers, a word otherwise), ``bad`` with ``value``."""
    url = openapi_path
    for parameter in parameters:
        if parameter["in"] != "path":
            continue
        name = parameter["name"]
        filled = value if name == bad else ("1" if is_integer(parameter["schema"]) else "bounds-chat")
        url = url.replace("{" + name + "}", filled)
    return url


def probes(served: Served) -> list[Probe]:
    """A probe for every integer parameter and body field of every route, and every bad value."""
    found: list[Probe] = []
    for method, _, openapi_path, operation, document in operations(served):
        parameters = operation.get("parameters", [])
        content = operation.get("requestBody", {}).get("content", {})
        json_schema = resolve(document, content["application/json"]["schema"]) if "application/json" in content else {}
        body = minimal(json_schema) if operation.get("requestBody", {}).get("required") else None
        for parameter in parameters:
            if not is_integer(parameter["schema"]):
                continue
            name, where = parameter["name"], parameter["in"]
            for value in (*OUT_OF_RANGE, *MALFORMED_IN_URL):
                text = str(value)
                found.append(
                    Probe(
                        method,
                        url_for(openapi_path, parameters, name if where == "path" else None, text),
                        name,
                        value,
                        query={name: text} if where == "query" else {},
                        headers={name: text} if where == "header" else {},
                        json=body,
                    )
                )
        path = url_for(openapi_path, parameters)
        for name, prop in json_schema.get("properties", {}).items():
            if not (is_integer(prop) or is_integer_list(prop)):
                continue
            for value in (*OUT_OF_RANGE, *MALFORMED_IN_JSON):
                sent = [value] if is_integer_list(prop) else value
                found.append(Probe(method, path, name, value, json={**(body or minimal(json_schema)), name: sent}))
        form = content.get("multipart/form-data", {}).get("schema", {})
        for name, prop in form.get("properties", {}).items():
            if is_integer(prop):
                for value in (*OUT_OF_RANGE, *MALFORMED_IN_URL):
                    found.append(Probe(method, path, name, value, form={name: str(value)}))
    return found


def send(http: httpx.Client, probe: Probe) -> httpx.Response:
    """The probe's request; a stream that opens (it would never end) is closed once its status is known."""
    if probe.form is not None:
        files = {"file": ("bounds.md", b"# Bounds\n\nA kettle.", "text/markdown")}
        return http.request(probe.method, probe.path, data=probe.form, files=files)
    kwargs: dict[str, Any] = {"params": probe.query, "headers": probe.headers}
    if probe.json is not None:
        kwargs["json"] = probe.json
    with http.stream(probe.method, probe.path, **kwargs) as response:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return httpx.Response(response.status_code, headers=response.headers, content=b"")
        response.read()
        return response


def test_every_integer_of_every_route_is_bounded_in_the_schema(served: Served) -> None:
    """What the walk below proves by behaviour, stated where clients read it: every integer a request
    carries has a lower bound and an upper bound that fits SQLite."""

    def check(where: str, schema: dict[str, Any]) -> None:
        options = [schema, *schema.get("anyOf", [])]
        for option in options:
            if option.get("type") == "integer":
                assert "minimum" in option, f"{where}: no minimum"
                below = option.get("exclusiveMaximum", option.get("maximum", SQL_INTEGER_LIMIT) + 1)
                assert below <= SQL_INTEGER_LIMIT, f"{where}: no maximum that SQLite holds"
            if option.get("type") == "array":
                check(f"{where}[]", option.get("items", {}))

    checked = 0
    for method, _, openapi_path, operation, document in operations(served):
        for parameter in operation.get("parameters", []):
            check(f"{method} {openapi_path} {parameter['name']}", parameter["schema"])
            checked += is_integer(parameter["schema"])
        for media, content in operation.get("requestBody", {}).get("content", {}).items():
            model = resolve(document, content["schema"])
            for name, prop in model.get("properties", {}).items():
                check(f"{method} {openapi_path} {media} {name}", prop)
                checked += is_integer(prop) or is_integer_list(prop)
    assert checked >= 30


def test_out_of_range_and_malformed_integers_are_a_400_on_every_route(served: Served) -> None:
    found = probes(served)
    named = {(probe.method, probe.path.split("/")[2], probe.name) for probe in found}
    assert len(named) >= 30, named  # path, query, header, JSON body and form integers alike
    before = table_counts(served.vault)
    failures: list[str] = []
    with httpx.Client(base_url=served.url, headers=served.auth(), trust_env=False, timeout=30) as http:
        for probe in found:
            response = send(http, probe)
            if response.status_code != 400:
                failures.append(f"{probe}: {response.status_code} {response.text[:120]}")
                continue
            error = assert_error(response, 400, "validation_error")
            if probe.name not in str(error["message"]):
                failures.append(f"{probe}: the error does not name {probe.name}: {error['message']}")
        # the bounds themselves are ids a route looks up: the answer is that nothing has them, not a refusal
        for edge in (1, MAX_SQL_INTEGER):
            assert_error(http.get(f"/v6/facts/{edge}"), 404, "not_found")
            assert_error(http.get("/v6/documents", params={"collection_id": edge}), 404, "not_found")
    assert not failures, "\n".join(failures)
    assert table_counts(served.vault) == before  # refused before anything was written


def mcp_probes(tools: list[Any]) -> list[tuple[str, str, Any, dict[str, Any]]]:
    """(tool, argument, bad value, arguments) for every integer argument of every tool."""
    found = []
    for tool in tools:
        schema = tool.input_schema
        required = dict.fromkeys(schema.get("required", []), "bounds")
        base = {**required, **MCP_BASE_ARGUMENTS.get(tool.name, {})}
        for name, prop in schema.get("properties", {}).items():
            if is_integer(prop):
                for value in (*OUT_OF_RANGE, *MALFORMED_IN_JSON):
                    found.append((tool.name, name, value, {**base, name: value}))
    return found


def test_out_of_range_and_malformed_integers_are_readable_tool_errors_on_every_tool(served: Served) -> None:
    before = table_counts(served.vault)

    async def walk(client: Client) -> list[str]:
        tools = (await client.list_tools()).tools
        found = mcp_probes(tools)
        ids = {tool for tool, name, _, _ in found if name.endswith("_id")}
        assert {"get_object", "correct_fact", "recall_context", "upload_document"} <= ids
        failures = []
        for tool, name, value, arguments in found:
            result = await client.call_tool(tool, arguments)
            text = text_of(result)
            if not result.is_error or "internal_error" in text or name not in text or "Traceback" in text:
                failures.append(f"{tool} {name}={value!r}: error={result.is_error} {text[:160]}")
        return failures

    async def go() -> list[str]:
        async with connect(served) as client:
            return await walk(client)

    failures = asyncio.run(go())
    assert not failures, "\n".join(failures)
    assert table_counts(served.vault) == before
