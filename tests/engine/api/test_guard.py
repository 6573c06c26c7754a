"""The guard's rules one by one: odd headers, content types, CORS, failures, a closing vault.

Requests whose headers no HTTP client would send (no Host, two Hosts) go straight into the ASGI app.
Body size and concurrency are in ``test_guard_limits.py``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
import pytest

from engine import Vault
from engine.api.app import create_app
from engine.config import EndpointSettings
from tests.engine.api.conftest import PORT, assert_error
from tests.engine.api.downstream import AUTH, TOKEN, Downstream, guarded


async def call_asgi(
    app: Any,
    *,
    method: str = "GET",
    path: str = "/v6/health",
    headers: list[tuple[bytes, bytes]] | None = None,
    body: bytes = b"",
    kind: str = "http",
) -> list[dict[str, Any]]:
    """One request straight into an ASGI app, headers exactly as given (no client adds any)."""
    scope = {
        "type": kind,
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers or [],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", PORT),
    }
    if kind == "websocket":
        inbox: list[dict[str, Any]] = [{"type": "websocket.connect"}]
    else:
        inbox = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if inbox:
            return inbox.pop(0)
        await asyncio.sleep(3600)  # like a server: nothing more arrives until the client goes away
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(app(scope, receive, send), timeout=10)
    return sent


def status_and_body(sent: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], json.loads(body)


def host(value: str) -> tuple[bytes, bytes]:
    return (b"host", value.encode())


# -- Host, Origin, token: cases the matrix cannot express through an HTTP client -------------------
@pytest.mark.parametrize(
    "headers",
    [
        [],
        [host(f"127.0.0.1:{PORT}"), host(f"127.0.0.1:{PORT}")],
        [host(f"evil.com:{PORT}"), host(f"127.0.0.1:{PORT}")],
        [host(f" 127.0.0.1:{PORT}")],
    ],
    ids=["no Host", "two Hosts", "evil then good", "leading space"],
)
def test_odd_host_headers_are_misdirected(vault: Vault, token: str, headers: list[tuple[bytes, bytes]]) -> None:
    app = create_app(vault, token=token, port=PORT)
    status, body = status_and_body(asyncio.run(call_asgi(app, headers=headers)))
    assert status == 421
    assert body["error"]["code"] == "misdirected_request"


def test_two_origin_headers_are_refused_even_if_one_is_allowed(vault: Vault, token: str) -> None:
    allowed = f"http://localhost:{PORT}"
    app = create_app(vault, token=token, port=PORT, settings=EndpointSettings(allowed_origins=(allowed,)))
    one = [host(f"127.0.0.1:{PORT}"), (b"origin", allowed.encode())]
    two = [*one, (b"origin", b"http://evil.com")]
    assert status_and_body(asyncio.run(call_asgi(app, headers=one)))[0] == 200
    assert status_and_body(asyncio.run(call_asgi(app, headers=two)))[0] == 403


def test_allowed_origins_compare_without_case_or_trailing_slash(vault: Vault, token: str) -> None:
    settings = EndpointSettings(allowed_origins=(f"HTTP://LocalHost:{PORT}/",))
    app = create_app(vault, token=token, port=PORT, settings=settings)
    ok = [host(f"127.0.0.1:{PORT}"), (b"origin", f"http://localhost:{PORT}".encode())]
    other_port = [host(f"127.0.0.1:{PORT}"), (b"origin", f"http://localhost:{PORT + 1}".encode())]
    assert status_and_body(asyncio.run(call_asgi(app, headers=ok)))[0] == 200
    assert status_and_body(asyncio.run(call_asgi(app, headers=other_port)))[0] == 403


@pytest.mark.parametrize(
    "authorization",
    ["{t}", "Basic {t}", "Bearer", "Bearer ", "Bearer {t}x", "Bearer {t} {t}", "Token {t}"],
)
def test_malformed_authorization_is_401(client: httpx.Client, token: str, authorization: str) -> None:
    response = client.get("/v6/jobs", headers={"Authorization": authorization.format(t=token)})
    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_bearer_scheme_is_case_insensitive(client: httpx.Client, token: str) -> None:
    assert client.get("/v6/jobs", headers={"Authorization": f"bearer {token}"}).status_code == 200


def test_two_authorization_headers_are_refused(vault: Vault, token: str) -> None:
    app = create_app(vault, token=token, port=PORT)
    good = (b"authorization", f"Bearer {token}".encode())
    headers = [host(f"127.0.0.1:{PORT}"), good, good]
    assert status_and_body(asyncio.run(call_asgi(app, path="/v6/jobs", headers=headers)))[0] == 401


def test_only_the_exact_health_route_is_public(client: httpx.Client) -> None:
    assert client.get("/v6/health").status_code == 200
    assert_error(client.get("/v6/health/"), 401)
    assert_error(client.post("/v6/health", json={}), 401)
    assert_error(client.get("/openapi.json"), 401)
    assert_error(client.get("/docs"), 401)


def test_interactive_docs_are_not_served(client: httpx.Client, token: str) -> None:
    # they would load scripts from a CDN; the schema itself is there behind the token
    auth = {"Authorization": f"Bearer {token}"}
    assert_error(client.get("/docs", headers=auth), 404, "not_found")
    assert client.get("/openapi.json", headers=auth).json()["info"]["title"] == "Cairn"


# -- content type ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content_type", "status"),
    [
        ("application/json", 404),
        ("application/json; charset=utf-8", 404),
        ("Application/JSON", 404),
        ("multipart/form-data; boundary=x", 404),
        ("text/plain", 415),
        ("application/x-www-form-urlencoded", 415),
        ("application/jsonx", 415),
        ("text/json", 415),
        ("", 415),
    ],
)
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_state_changing_bodies_must_be_json_or_multipart(
    client: httpx.Client, token: str, method: str, content_type: str, status: int
) -> None:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}
    response = client.request(method, "/v6/no-such-route", headers=headers, content=b'{"a": 1}')
    assert_error(response, status, "unsupported_media_type" if status == 415 else "not_found")


def test_missing_content_type_with_a_body_is_415(vault: Vault, token: str) -> None:
    app = create_app(vault, token=token, port=PORT)
    headers = [
        host(f"127.0.0.1:{PORT}"),
        (b"authorization", f"Bearer {token}".encode()),
        (b"content-length", b"2"),
    ]
    status, body = status_and_body(
        asyncio.run(call_asgi(app, method="POST", path="/v6/x", headers=headers, body=b"{}"))
    )
    assert (status, body["error"]["code"]) == (415, "unsupported_media_type")


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_bodyless_state_changing_requests_need_no_content_type(client: httpx.Client, token: str, method: str) -> None:
    """``curl -X DELETE`` sends neither a body nor a Content-Type: it passes (and meets the 404 of the route)."""
    response = client.request(method, "/v6/no-such-route", headers={"Authorization": f"Bearer {token}"})
    assert_error(response, 404, "not_found")
    response = client.request(
        method,
        "/v6/no-such-route",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert_error(response, 404, "not_found")


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/mixed", "text/json", ""]
)
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_bodyless_state_changing_requests_may_not_declare_another_type(
    client: httpx.Client, token: str, method: str, content_type: str
) -> None:
    """A cross-site form or ``no-cors`` fetch needs no body to hit a restore or close route; its type gives it away."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}
    response = client.request(method, "/v6/no-such-route", headers=headers)
    error = assert_error(response, 415, "unsupported_media_type")
    assert "without a body may leave Content-Type out" in str(error["details"])


def test_a_bodyless_delete_with_a_form_type_changes_nothing(client: httpx.Client, vault: Vault, token: str) -> None:
    fact = vault.facts.add("user", "likes", "green tea")
    auth = {"Authorization": f"Bearer {token}"}
    for content_type in ("text/plain", "application/x-www-form-urlencoded"):
        refused = client.delete(f"/v6/facts/{fact.id}", headers={**auth, "Content-Type": content_type})
        assert_error(refused, 415, "unsupported_media_type")
        assert vault.facts.get(fact.id).status == "active"
    assert client.delete(f"/v6/facts/{fact.id}", headers=auth).status_code == 200  # what curl -X DELETE sends
    assert vault.facts.get(fact.id).status == "deleted"
    refused = client.post(f"/v6/facts/{fact.id}/restore", headers={**auth, "Content-Type": "text/plain"})
    assert_error(refused, 415, "unsupported_media_type")
    assert vault.facts.get(fact.id).status == "deleted"


@pytest.mark.parametrize("value", [b"abc", b"-1", b"1e3", b"10, 12"])
def test_malformed_content_length_is_400(vault: Vault, token: str, value: bytes) -> None:
    app = create_app(vault, token=token, port=PORT)
    headers = [
        host(f"127.0.0.1:{PORT}"),
        (b"authorization", f"Bearer {token}".encode()),
        (b"content-type", b"application/json"),
        (b"content-length", value),
    ]
    status, body = status_and_body(asyncio.run(call_asgi(app, method="POST", path="/v6/x", headers=headers)))
    assert (status, body["error"]["code"]) == (400, "bad_request")


# -- CORS ------------------------------------------------------------------------------------------
def test_preflight_from_a_foreign_origin_gets_no_cors_headers(client: httpx.Client, token: str) -> None:
    for headers in (
        {
            "Origin": "http://evil.com",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
        {
            "Origin": "http://evil.com",
            "Access-Control-Request-Method": "POST",
            "Authorization": f"Bearer {token}",
        },
    ):
        response = client.options("/v6/jobs", headers=headers)
        assert_error(response, 403, "origin_not_allowed")
        assert not [h for h in response.headers if h.lower().startswith("access-control-")]


def test_cors_headers_from_inside_the_app_are_stripped() -> None:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=guarded(Downstream()))
        async with httpx.AsyncClient(transport=transport, base_url=f"http://127.0.0.1:{PORT}") as client:
            return await client.get("/anything", headers=AUTH)

    response = asyncio.run(go())
    assert response.status_code == 200
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"


# -- failures escaping the app, closing vault, websockets ------------------------------------------
def test_an_exception_escaping_the_app_is_a_generic_500(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=guarded(Downstream()))
        async with httpx.AsyncClient(transport=transport, base_url=f"http://127.0.0.1:{PORT}") as client:
            return await client.get("/boom", headers=AUTH)

    response = asyncio.run(go())
    assert_error(response, 500, "internal_error")
    assert "CANARY-BOOM" not in response.text
    assert "RuntimeError" in caplog.text
    assert "CANARY-BOOM" not in caplog.text


def test_a_closing_vault_answers_503_with_retry_after(vault: Vault, token: str) -> None:
    from starlette.testclient import TestClient

    app = create_app(vault, token=token, port=PORT)
    vault.close()
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as client:
        for response in (
            client.get("/v6/health"),
            client.get("/v6/jobs", headers={"Authorization": f"Bearer {token}"}),
        ):
            assert_error(response, 503, "unavailable")
            assert response.headers["retry-after"] == "5"
        # the identity checks still come first
        assert_error(client.get("/v6/jobs"), 401)
        assert_error(client.get("/v6/health", headers={"Host": "evil.com"}), 421)


def test_websocket_handshakes_pass_the_same_identity_checks() -> None:
    app = guarded(Downstream())
    good = [host(f"127.0.0.1:{PORT}"), (b"authorization", f"Bearer {TOKEN}".encode())]
    cases = {
        "good": good,
        "bad host": [host("evil.com"), good[1]],
        "origin": [*good, (b"origin", b"http://evil.com")],
        "no token": good[:1],
    }
    answers = {
        name: asyncio.run(call_asgi(app, path="/ws", headers=h, kind="websocket"))[0] for name, h in cases.items()
    }
    assert answers["good"] == {"type": "websocket.accept"}
    for name in ("bad host", "origin", "no token"):
        assert answers[name]["type"] == "websocket.close" and answers[name]["code"] == 1008, name


def test_the_token_provider_is_asked_on_every_request() -> None:
    current = {"token": "first"}
    app = guarded(Downstream(), token=lambda: current["token"])

    async def get(token: str) -> int:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://127.0.0.1:{PORT}") as client:
            response = await client.get("/x", headers={"Authorization": f"Bearer {token}"})
            return response.status_code

    assert asyncio.run(get("first")) == 200
    current["token"] = "second"
    assert asyncio.run(get("first")) == 401
    assert asyncio.run(get("second")) == 200
    current["token"] = None  # type: ignore[assignment]
    assert asyncio.run(get("second")) == 401
