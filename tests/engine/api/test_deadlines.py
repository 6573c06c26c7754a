"""Deadlines for reading a request, over raw sockets on loopback: a connection that sends nothing, stops in its
headers, or trickles its body is closed — while an answer that takes long (a change stream) is not cut.

The server here runs with deadlines of half a second so that the tests are quick; what they check is that the
server closes such a connection at all (recv returns end-of-stream), never how long it took.  A server that
keeps the connection would leave the test's socket waiting out its own timeout, and the test fails.
"""

from __future__ import annotations

import json
import select
import socket
from collections.abc import Iterator

import pytest

from engine import Vault
from engine.api.app import create_app
from engine.api.server import EndpointServer
from engine.api.sse import StreamSettings
from tests.engine.api.conftest import Served, table_counts

#: The deadlines of the server under test (headers and body alike).
DEADLINE_S = 0.5
#: How long a socket waits for the server at most: a hang guard, far beyond any deadline, never a measurement.
PATIENCE_S = 30.0
#: Heartbeats of the change stream under test: many fit into one deadline.
HEARTBEAT_S = 0.1


@pytest.fixture
def quick(vault: Vault, token: str) -> Iterator[Served]:
    """The real app on loopback with short deadlines (and a change stream that beats often)."""
    server = EndpointServer(
        lambda port: create_app(
            vault,
            token=token,
            port=port,
            body_timeout_s=DEADLINE_S,
            streams=StreamSettings(heartbeat_s=HEARTBEAT_S),
        ),
        0,
        headers_timeout_s=DEADLINE_S,
    )
    server.start()
    try:
        yield Served(server, vault, token)
    finally:
        server.stop()


def connect(served: Served) -> socket.socket:
    return socket.create_connection(("127.0.0.1", served.server.port), timeout=PATIENCE_S)


def head(served: Served, method: str, path: str, *extra: str, token: str | None = None) -> bytes:
    """A request's head (request line and headers, with the blank line that ends them)."""
    lines = [
        f"{method} {path} HTTP/1.1",
        f"Host: 127.0.0.1:{served.server.port}",
        f"Authorization: Bearer {token or served.token}",
        *extra,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a server that never does times the socket
    out, failing the test)."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def trickle_until_closed(sock: socket.socket, budget: int) -> bytes:
    """Send one body byte at a time, a little apart, until the server answers; then read until it closes.

    ``budget`` bytes at most, fewer than the body declared, so the body never completes.
    """
    for _ in range(budget):
        readable, _, _ = select.select([sock], [], [], HEARTBEAT_S)
        if readable:
            return read_until_closed(sock)
        try:
            sock.sendall(b" ")
        except (BrokenPipeError, ConnectionResetError):
            return read_until_closed(sock)
    raise AssertionError("the server neither answered nor closed the connection while the body was trickled")


def parse(response: bytes) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-cased names) and body of one HTTP/1.1 response."""
    raw_head, _, body = response.partition(b"\r\n\r\n")
    lines = raw_head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {name.lower(): value for name, value in headers.items()}, body


def test_a_connection_that_sends_nothing_is_closed_while_a_stream_being_answered_is_not(quick: Served) -> None:
    with connect(quick) as stream:
        stream.sendall(head(quick, "GET", "/v6/events/stream", "Accept: text/event-stream"))
        received = b""
        while b"event: connected" not in received:
            received += stream.recv(65536)
        with connect(quick) as idle:
            assert read_until_closed(idle) == b""  # closed by the server, without a word: there was no request
        # The stream was opened before the idle connection and outlived it: it keeps beating, many deadlines long.
        while received.count(b"event: heartbeat") < 4 * DEADLINE_S / HEARTBEAT_S:
            chunk = stream.recv(65536)
            assert chunk, "the change stream was closed"
            received += chunk


@pytest.mark.parametrize(
    "partial",
    [b"GE", b"POST /v6/ingest HTTP/1.1\r\n", b"POST /v6/ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le"],
    ids=["request-line", "no-headers", "half-a-header"],
)
def test_a_connection_that_stops_in_its_headers_is_closed(quick: Served, partial: bytes) -> None:
    before = table_counts(quick.vault)
    with connect(quick) as sock:
        sock.sendall(partial)
        assert read_until_closed(sock) == b""
    assert table_counts(quick.vault) == before


def test_a_kept_alive_connection_that_stops_in_its_next_request_is_closed(quick: Served) -> None:
    with connect(quick) as sock:
        sock.sendall(head(quick, "GET", "/v6/jobs"))
        received = b""
        while b"\r\n\r\n" not in received:
            received += sock.recv(65536)
        status, headers, body = parse(received)
        assert status == 200 and headers.get("connection") != "close"
        while len(body) < int(headers["content-length"]):
            body += sock.recv(65536)
        sock.sendall(b"GET /v6/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the next request, never finished
        assert read_until_closed(sock) == b""


@pytest.mark.parametrize("framing", ["Content-Length: 100000", "Transfer-Encoding: chunked"])
def test_a_trickled_body_is_answered_408_and_the_connection_closed(quick: Served, framing: str) -> None:
    before = table_counts(quick.vault)
    with connect(quick) as sock:
        sock.sendall(head(quick, "POST", "/v6/ingest", "Content-Type: application/json", framing))
        start = b'{"conversation_id": "slow", "content": "'
        sock.sendall(f"{len(start) + 1000:x}\r\n".encode() + start if "chunked" in framing else start)
        status, headers, body = parse(trickle_until_closed(sock, budget=int(PATIENCE_S / HEARTBEAT_S)))
    assert status == 408
    assert headers["connection"] == "close" and headers["content-type"] == "application/json"
    error = json.loads(body)["error"]
    assert error["code"] == "request_timeout" and error["details"]["body_timeout_s"] == DEADLINE_S
    assert table_counts(quick.vault) == before  # nothing was stored


@pytest.mark.parametrize(
    ("method", "path", "bearer", "status"),
    [
        ("POST", "/v6/no-such-route", None, 404),  # answered by the app without reading the body
        ("POST", "/v6/ingest", "not-the-token", 401),  # refused by the guard before reading it
    ],
)
def test_an_answer_given_before_the_body_is_read_closes_the_connection(
    quick: Served, method: str, path: str, bearer: str | None, status: int
) -> None:
    """Otherwise the rest of the body keeps arriving, byte by byte, on a kept-alive connection no timer ends."""
    with connect(quick) as sock:
        extra = ("Content-Type: application/json", "Content-Length: 100000")
        sock.sendall(head(quick, method, path, *extra, token=bearer) + b'{"conversation_id": ')
        answer, answer_headers, _ = parse(trickle_until_closed(sock, budget=int(PATIENCE_S / HEARTBEAT_S)))
    assert answer == status and answer_headers["connection"] == "close"
