"""Malformed request bodies, on every route that takes one (the fast paths included): the client's 400 naming
``body``, never the server's 500.

The routes are not listed here: the test walks the app's FastAPI routes and sends each body to every operation
that changes something.  A body nested 100,000 levels deep is only 100 kB and passes every size check; it used to
overflow the JSON parser's stack on the upload route (a ``RecursionError`` answered 500), while the other routes
answered a bare "error parsing the body" — the same mistake, told differently.
"""

from __future__ import annotations

import httpx

from tests.engine.api.conftest import Served, assert_error, table_counts

#: Bodies no route can take, each labelled application/json.
MALFORMED: dict[str, bytes] = {
    "arrays nested 100,000 deep": b"[" * 100_000,
    "objects nested 100,000 deep": b'{"a":' * 100_000,
    "arrays nested 50,000 deep and closed": b"[" * 50_000 + b"]" * 50_000,
    "invalid UTF-8": b'{"name": "\xff\xfe", "conversation_id": "\xc3\x28"}',
    "truncated": b'{"conversation_id": ',
    "a number past Python's digit limit": b'{"limit": 1' + b"0" * 5000 + b"}",
    "a list": b"[]",
    "a string": b'"text"',
    "a number": b"42",
    "true": b"true",
}
#: Methods whose routes may take a body.
WITH_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def routes_with_bodies(served: Served) -> list[tuple[str, str]]:
    """(method, path) of every operation whose request body the app's OpenAPI document declares — the FastAPI
    routes and the lean handlers alike; path parameters filled (ids with 1, which exists nowhere; a malformed body
    must be refused before a lookup)."""
    document = served.server.app.openapi()
    found = []
    for openapi_path, item in document["paths"].items():
        if openapi_path == "/mcp":  # JSON-RPC's own contract: below
            continue
        for method, operation in item.items():
            if method.upper() not in WITH_BODY or "requestBody" not in operation:
                continue
            path = openapi_path
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path":
                    path = path.replace("{" + parameter["name"] + "}", "1")
            found.append((method.upper(), path.replace("{conversation_id}", "malformed-chat")))
    return found


def test_every_malformed_body_is_a_400_naming_the_body_on_every_route(served: Served) -> None:
    routes = routes_with_bodies(served)
    assert ("POST", "/v6/ingest") in routes and ("POST", "/v6/recall") in routes  # the fast paths' routes
    assert ("POST", "/v6/documents") in routes and ("DELETE", "/v6/watch") in routes
    assert len(routes) >= 20
    before = table_counts(served.vault)
    failures = []
    headers = {**served.auth(), "Content-Type": "application/json"}
    with httpx.Client(base_url=served.url, headers=headers, trust_env=False, timeout=60) as http:
        for method, path in routes:
            for label, body in MALFORMED.items():
                response = http.request(method, path, content=body)
                if response.status_code != 400:
                    failures.append(f"{method} {path} {label}: {response.status_code} {response.text[:120]}")
                    continue
                error = assert_error(response, 400, None)
                field = error["details"].get("field")  # type: ignore[union-attr]
                if (error["code"], field) != ("validation_error", "body"):
                    failures.append(f"{method} {path} {label}: {error['code']} {field!r} {error['message']}")
        # /mcp answers in JSON-RPC's shape (its own contract), but a malformed body is still the client's 4xx
        mcp = {"Accept": "application/json, text/event-stream"}
        for label, body in MALFORMED.items():
            response = http.post("/mcp", content=body, headers=mcp)
            if not 400 <= response.status_code < 500:
                failures.append(f"POST /mcp {label}: {response.status_code} {response.text[:120]}")
    assert not failures, "\n".join(failures)
    assert table_counts(served.vault) == before


def test_the_fast_paths_answer_a_malformed_body_as_a_route_without_one(served: Served) -> None:
    """The lean handlers hand every body they cannot take to FastAPI, so a malformed one gets the route's answer,
    word for word what a route without a fast path (the batch ingest) answers: a 400 naming the body."""
    headers = {**served.auth(), "Content-Type": "application/json"}
    with httpx.Client(base_url=served.url, headers=headers, trust_env=False, timeout=60) as http:
        for label, body in MALFORMED.items():
            answers = {path: http.post(path, content=body) for path in ("/v6/ingest", "/v6/recall", "/v6/ingest/batch")}
            for path, response in answers.items():
                error = assert_error(response, 400, "validation_error")
                assert error["details"]["field"] == "body", (label, path, error)  # type: ignore[index]
            assert len({response.text for response in answers.values()}) == 1, label
    app = served.server.app
    assert app.fast_ingest.answered == 0 and app.fast_recall.answered == 0
