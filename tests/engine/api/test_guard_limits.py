"""Body size and concurrency: 413 for declared and streamed bodies, 429 when slots run out, and
long-lived streams in their own pool — in process and over real sockets.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import pytest

from engine import Vault
from engine.api.app import create_app
from engine.api.guard import Guard
from engine.api.server import EndpointServer
from engine.config import EndpointSettings
from tests.engine.api.conftest import PORT, assert_error, seed, table_counts
from tests.engine.api.downstream import AUTH, TOKEN, Downstream, guarded


# -- body size -------------------------------------------------------------------------------------
def test_declared_body_over_the_cap_is_413_before_routing(vault: Vault, token: str) -> None:
    from starlette.testclient import TestClient

    seed(vault)
    before = table_counts(vault)
    app = create_app(vault, token=token, port=PORT, settings=EndpointSettings(max_body_bytes=1024))
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as client:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        at_cap = client.post("/v6/no-such-route", headers=headers, content=b"x" * 1024)
        over = client.post("/v6/no-such-route", headers=headers, content=b"x" * 1025)
        over_existing = client.post("/v6/jobs", headers=headers, content=b"x" * 5000)
    assert_error(at_cap, 404, "not_found")  # passed the guard, then no such route
    error = assert_error(over, 413, "payload_too_large")
    assert error["details"]["max_body_bytes"] == 1024  # type: ignore[index]
    assert_error(over_existing, 413, "payload_too_large")
    assert table_counts(vault) == before


async def _chunks(total: int, size: int = 256) -> AsyncIterator[bytes]:
    sent = 0
    while sent < total:
        piece = min(size, total - sent)
        sent += piece
        yield b"y" * piece


def _post_chunked(app: Guard, total: int) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://127.0.0.1:{PORT}") as client:
            headers = {**AUTH, "Content-Type": "application/json"}
            return await client.post("/upload", headers=headers, content=_chunks(total))

    return asyncio.run(go())


def test_chunked_body_is_counted_while_streaming(vault: Vault) -> None:
    downstream = Downstream()
    ok = _post_chunked(guarded(downstream), 1000)
    assert ok.status_code == 200 and ok.json() == {"received": 1000}
    assert "transfer-encoding" in ok.request.headers and "content-length" not in ok.request.headers

    downstream = Downstream()
    over = _post_chunked(guarded(downstream), 5000)
    assert_error(over, 413, "payload_too_large")
    assert downstream.largest_body <= 1024 + 256  # it stopped reading at the chunk that crossed the cap


# -- over real sockets: body cut-off and concurrency -----------------------------------------------
def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.005)


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read one HTTP response (we send Connection: close, so it ends where the stream ends)."""
    sock.settimeout(5)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


@pytest.fixture
def downstream_server() -> Iterator[tuple[EndpointServer, Downstream]]:
    downstream = Downstream()
    server = EndpointServer(lambda port: guarded(downstream, port=port), 0)
    server.start()
    try:
        yield server, downstream
    finally:
        downstream.release.set()
        server.stop()


def _request_head(server: EndpointServer, method: str, path: str, extra: str = "") -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Authorization: Bearer {TOKEN}\r\n"
        f"Connection: close\r\n{extra}\r\n"
    ).encode()


def test_declared_oversize_is_refused_without_reading_the_body(
    downstream_server: tuple[EndpointServer, Downstream],
) -> None:
    server, downstream = downstream_server
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(
            _request_head(
                server,
                "POST",
                "/upload",
                "Content-Type: application/json\r\nContent-Length: 100000\r\n",
            )
        )
        status, _headers, body = read_response(sock)  # answered although no body byte was sent
    assert status == 413
    assert json.loads(body)["error"]["code"] == "payload_too_large"
    assert downstream.largest_body == 0


def test_chunked_upload_over_the_cap_is_cut_off_over_http(
    downstream_server: tuple[EndpointServer, Downstream],
) -> None:
    server, downstream = downstream_server
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(
            _request_head(
                server,
                "POST",
                "/upload",
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
            )
        )
        for _ in range(2):
            sock.sendall(b"258\r\n" + b"z" * 600 + b"\r\n")  # 0x258 = 600 bytes; two cross the 1024 cap
        status, _headers, body = read_response(sock)
    assert status == 413
    assert json.loads(body)["error"]["code"] == "payload_too_large"
    assert downstream.largest_body <= 1200


def test_too_many_requests_at_once_get_429_with_retry_after(
    downstream_server: tuple[EndpointServer, Downstream],
) -> None:
    server, _downstream = downstream_server
    guard: Guard = server.app
    with (
        socket.create_connection(("127.0.0.1", server.port)) as slow,
        httpx.Client(trust_env=False) as http,
    ):
        # a slow upload: headers and half the body now, the rest later; meanwhile it holds the
        # only request slot
        slow.sendall(
            _request_head(
                server,
                "POST",
                "/upload",
                "Content-Type: application/json\r\nContent-Length: 10\r\n",
            )
            + b"12345"
        )
        wait_until(lambda: guard.requests.in_use == 1)
        busy = http.post(f"{server.address}/other", headers=AUTH, json={"a": 1})
        error = assert_error(busy, 429, "too_many_requests")
        assert busy.headers["retry-after"] == "1"
        assert error["details"]["limit"] == 1  # type: ignore[index]
        slow.sendall(b"67890")
        status, _headers, body = read_response(slow)
        assert (status, json.loads(body)) == (200, {"received": 10})
        wait_until(lambda: guard.requests.in_use == 0)
        assert http.post(f"{server.address}/other", headers=AUTH, json={"a": 1}).json() == {"received": 7}


def test_streams_have_their_own_pool(downstream_server: tuple[EndpointServer, Downstream]) -> None:
    server, downstream = downstream_server
    guard: Guard = server.app
    with (
        socket.create_connection(("127.0.0.1", server.port)) as stream,
        httpx.Client(trust_env=False) as http,
    ):
        stream.sendall(_request_head(server, "GET", "/hold/stream", "Accept: text/event-stream\r\n"))
        wait_until(lambda: guard.streams.in_use == 1)
        # an open stream does not take the only ordinary slot …
        assert http.get(f"{server.address}/plain", headers=AUTH).status_code == 200
        # … and streams beyond their pool are refused, by path or by asking for an event stream
        assert_error(http.get(f"{server.address}/hold/stream", headers=AUTH), 429, "too_many_requests")
        sse = http.get(f"{server.address}/other", headers={**AUTH, "Accept": "text/event-stream"})
        assert_error(sse, 429, "too_many_requests")
        downstream.release.set()
        status, _headers, _body = read_response(stream)
        assert status == 200
    wait_until(lambda: guard.streams.in_use == 0)
    assert guard.requests.in_use == 0
