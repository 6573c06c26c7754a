"""The lean fast paths (``POST /v6/ingest``, ``POST /v6/recall``) take only bodies labelled JSON, so a request
gets the same answer whichever way it goes in: JSON labelled ``multipart/form-data`` is refused as the FastAPI
route refuses it, instead of being stored (202) or recalled (200) by the handler that never looked at the label.
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
        ("multipart/form-data", 400),  # FastAPI reads no JSON from a multipart body: the body is not the model
        ("multipart/form-data; boundary=cairn", 400),
        ("application/json; charset=latin-1", None),  # FastAPI parses it all the same: the route's own success
    ],
)
def test_a_body_not_labelled_utf8_json_is_answered_by_the_route_not_the_fast_path(
    served: Served, path: str, content_type: str, status: int | None
) -> None:
    """(Other types, and a body without one, never get this far: the guard answers 415 for every route.)"""
    post(served, path, "application/json")  # the middleware stack is built on the first request
    assert served.vault.jobs.wait_idle(120)
    before, counts = answered(served, path), table_counts(served.vault)
    response = post(served, path, content_type)
    if status is None:
        assert response.status_code == ACCEPTED[path], response.text
    else:
        error = assert_error(response, status, "validation_error")
        assert error["details"]["field"] == "body"  # type: ignore[index]
        assert table_counts(served.vault) == counts  # nothing stored
    assert answered(served, path) == before  # the fast path left it to the route
    for label in ("application/json", "application/json; charset=utf-8", 'Application/JSON;charset="UTF-8"'):
        assert post(served, path, label).status_code == ACCEPTED[path]
    assert answered(served, path) == before + 3  # while JSON in UTF-8, however spelled, takes the fast path
