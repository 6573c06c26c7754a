"""The hot routes (``POST /v6/ingest``, ``POST /v6/recall``) are each answered by one lean handler, which takes only
bodies labelled JSON: JSON labelled ``multipart/form-data`` is refused as a bad body, never stored (202) or recalled
(200) by a handler that did not look at the label; every refusal is in the endpoint's error shape.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.engine.api.conftest import Served, assert_error, table_counts

BODIES: dict[str, dict[str, Any]] = {
    "/v6/ingest": {"conversation_id": "typed-chat", "content": "I keep my kettle on the left shelf."},
    "/v6/recall": {"conversation_id": "typed-chat", "query": "Where is the kettle?"},
}
#: The answer of each route to a body it takes.
ACCEPTED = {"/v6/ingest": 202, "/v6/recall": 200}


def answered(served: Served, path: str) -> int:
    """Requests the fast path of ``path`` answered itself."""
    app: Any = served.server.app
    return int((app.fast_ingest if path == "/v6/ingest" else app.fast_recall).answered)


def post(served: Served, path: str, content_type: str | None) -> httpx.Response:
    headers = served.auth()
    if content_type is not None:
        headers["Content-Type"] = content_type
    with httpx.Client(base_url=served.url, trust_env=False, timeout=30) as http:
        return http.post(path, content=json.dumps(BODIES[path]).encode(), headers=headers)


@pytest.mark.parametrize("path", sorted(BODIES))
@pytest.mark.parametrize(
    ("content_type", "status"),
    [
        ("multipart/form-data", 400),  # not JSON: the body is not the request
        ("multipart/form-data; boundary=cairn", 400),
        ("application/json; charset=latin-1", None),  # JSON whatever charset it names: read as the bytes it is
    ],
)
def test_only_a_body_labelled_json_is_taken_and_every_other_is_refused_in_the_error_shape(
    served: Served, path: str, content_type: str, status: int | None
) -> None:
    """(Other types, and a body without one, never get this far: the guard answers 415 for every route.)"""
    post(served, path, "application/json")  # the middleware stack is built on the first request
    assert served.vault.jobs.wait_idle(120)
    before, counts = answered(served, path), table_counts(served.vault)
    response = post(served, path, content_type)
    if status is None:
        assert response.status_code == ACCEPTED[path], response.text
        assert answered(served, path) == before + 1
    else:
        error = assert_error(response, status, "validation_error")
        assert error["details"]["field"] == "body"  # type: ignore[index]
        assert table_counts(served.vault) == counts  # nothing stored
        assert answered(served, path) == before
    for label in ("application/json", "application/json; charset=utf-8", 'Application/JSON;charset="UTF-8"'):
        assert post(served, path, label).status_code == ACCEPTED[path]


@pytest.mark.parametrize("path", sorted(BODIES))
def test_one_handler_answers_every_request_to_a_hot_route(served: Served, path: str) -> None:
    """The lean handler is the route: another method is its 405, a bad body its 400 — FastAPI never sees the path."""
    with httpx.Client(base_url=served.url, trust_env=False, timeout=30, headers=served.auth()) as http:
        wrong = http.get(path)
        error = assert_error(wrong, 405, "method_not_allowed")
        assert error["details"]["allowed"] == "POST" and wrong.headers["allow"] == "POST"  # type: ignore[index]
        for body, field in (
            (b"{not json", "body"),
            (b"[1, 2]", "body"),
            (b'{"conversation_id": 7}', "conversation_id"),
        ):
            bad = http.post(path, content=body, headers={"Content-Type": "application/json"})
            assert assert_error(bad, 400, "validation_error")["details"]["field"] == field  # type: ignore[index]
    routes = [getattr(route, "path", "") for route in served.server.app.routes]
    assert path not in routes  # no second implementation behind it
    described = served.server.app.openapi()["paths"][path]["post"]
    assert set(described["responses"]) >= {str(ACCEPTED[path]), "400", "401"}
