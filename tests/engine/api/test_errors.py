"""Exception handlers: engine errors keep their status, code, message and fix; validation names the
field; a bug is a generic 500 that logs only the exception's type.

These handlers are installed on the endpoint app by ``create_app``; here they are installed on a
small FastAPI app whose routes raise each kind of error on purpose, which is the only way to reach
every branch before the engine routes that raise them exist.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Annotated

import httpx
import pytest
from fastapi import FastAPI, Query
from pydantic import BaseModel
from starlette.testclient import TestClient

from engine import Vault
from engine.api.app import create_app
from engine.api.errors import error_payload, install_error_handlers
from engine.errors import (
    Conflict,
    ModelUnavailable,
    NotFound,
    StorageFull,
    UnsupportedFile,
    ValidationError,
    VaultError,
)
from engine.store.writer import WriterClosed
from tests.engine.api.conftest import PORT, assert_error

CANARY = "CANARY-91c2-personal"


class Item(BaseModel):
    name: str
    count: int


RAISED: dict[str, VaultError] = {
    "not_found": NotFound("fact", 42),
    "conflict": Conflict("That conflict is already resolved.", fix="Reload the conflicts."),
    "validation": ValidationError("limit", "must be positive", fix="Send a limit of 1 or more."),
    "unsupported": UnsupportedFile("No parser reads .xyz files.", fix="Convert it to PDF or text."),
    "closing": WriterClosed("The vault is closing; nothing was written."),
    "model": ModelUnavailable("Ollama is not running.", fix="Start Ollama."),
    "full": StorageFull("The disk is full.", fix="Free some space."),
}


def build_app() -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/raise/{name}")
    def raise_named(name: str) -> None:
        raise RAISED[name]

    @app.post("/items")
    def make_item(item: Item, limit: Annotated[int, Query(ge=1)] = 10) -> dict[str, int]:
        return {"count": item.count, "limit": limit}

    @app.get("/bug")
    def bug() -> None:
        raise KeyError(f"{CANARY} leaked into an exception message")

    return app


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    # raise_server_exceptions=False: Starlette's error middleware re-raises after answering, and
    # the client should see the answer, as a real server's client would
    with TestClient(build_app(), raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("name", "status", "code"),
    [
        ("not_found", 404, "not_found"),
        ("conflict", 409, "conflict"),
        ("validation", 400, "validation_error"),
        ("unsupported", 415, "unsupported_file"),
        ("closing", 503, "writer_closed"),
        ("model", 503, "model_unavailable"),
        ("full", 507, "storage_full"),
    ],
)
def test_vault_errors_keep_status_code_message_and_fix(client: httpx.Client, name: str, status: int, code: str) -> None:
    exc = RAISED[name]
    error = assert_error(client.get(f"/raise/{name}"), status, code)
    assert error["message"] == exc.message
    details = error["details"]
    assert isinstance(details, dict)
    assert details["fix"] == exc.fix
    for key, value in exc.details.items():
        assert details[key] == value


def test_unavailable_errors_say_when_to_retry(client: httpx.Client) -> None:
    assert client.get("/raise/closing").headers["retry-after"] == "5"
    assert client.get("/raise/model").headers["retry-after"] == "5"
    assert "retry-after" not in client.get("/raise/conflict").headers


def test_validation_names_the_field_and_never_echoes_the_input(client: httpx.Client) -> None:
    missing = assert_error(client.post("/items", json={"name": CANARY}), 400, "validation_error")
    assert missing["message"].startswith("count: ")  # type: ignore[union-attr]
    assert missing["details"]["field"] == "count" and missing["details"]["in"] == "body"  # type: ignore[index]

    wrong_type = client.post("/items", json={"name": "a", "count": CANARY})
    error = assert_error(wrong_type, 400, "validation_error")
    assert error["details"]["field"] == "count"  # type: ignore[index]
    assert CANARY not in wrong_type.text

    query = assert_error(client.post("/items?limit=0", json={"name": "a", "count": 1}), 400, "validation_error")
    assert query["details"]["field"] == "limit" and query["details"]["in"] == "query"  # type: ignore[index]

    broken = client.post("/items", content=b'{"name": ', headers={"Content-Type": "application/json"})
    assert assert_error(broken, 400, "validation_error")["details"]["field"] == "body"  # type: ignore[index]

    assert client.post("/items", json={"name": "a", "count": 3}).json() == {"count": 3, "limit": 10}


def test_unknown_routes_and_methods_are_json(client: httpx.Client) -> None:
    assert_error(client.get("/nowhere"), 404, "not_found")
    error = assert_error(client.delete("/items"), 405, "method_not_allowed")
    assert error["details"]["allowed"] == "POST"  # type: ignore[index]


def test_a_bug_is_a_generic_500_and_logs_only_its_type(client: httpx.Client, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    response = client.get("/bug")
    error = assert_error(response, 500, "internal_error")
    assert CANARY not in response.text and "KeyError" not in response.text
    assert error["details"]["fix"]  # type: ignore[index]
    assert "KeyError" in caplog.text and "/bug" in caplog.text
    assert CANARY not in caplog.text
    assert all(record.exc_info is None for record in caplog.records if record.name.startswith("engine"))


def test_error_payload_shape_and_unusual_values() -> None:
    assert error_payload("x", "m") == b'{"error": {"code": "x", "message": "m", "details": {}}}'
    assert b'"ids": [1, 2]' in error_payload("x", "m", {"ids": (1, 2)})
    assert b'"where": "/a/b"' in error_payload("x", "m", {"where": PurePosixPath("/a/b")})  # not JSON: as text
    assert "ü".encode() in error_payload("x", "Grüße", {})


def test_the_endpoint_app_uses_these_handlers(vault: Vault) -> None:
    token = vault.endpoint_token()
    with TestClient(create_app(vault, token=token, port=PORT), base_url=f"http://127.0.0.1:{PORT}") as client:
        response = client.get("/v6/jobs?x=1", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200
        assert_error(
            client.get("/v6/nowhere", headers={"Authorization": f"Bearer {token}"}),
            404,
            "not_found",
        )
        assert_error(client.put("/v6/jobs", headers={"Authorization": f"Bearer {token}"}), 405)
