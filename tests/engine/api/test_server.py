"""The endpoint over real sockets: loopback only, token file and rotation, CORS, logs, failures."""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine import Settings, Vault
from engine.api.app import create_app
from engine.api.server import EndpointServer, bind_loopback
from engine.errors import EnvironmentProblem
from engine.token import rotate_token
from tests.engine.api.conftest import (
    HARDENING_HOSTS,
    Served,
    assert_error,
    host_is_allowed,
    open_vault,
    seed,
    table_counts,
)

CANARY = "CANARY-7f3a-private-memory-text"


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False, timeout=10) as client:
        yield client


def ipv6_loopback_available() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


def non_loopback_addresses() -> list[str]:
    """This machine's own non-loopback addresses, read locally (no name lookup, no traffic)."""
    found: set[str] = set()
    ip_tool = shutil.which("ip")
    if ip_tool:
        result = subprocess.run([ip_tool, "-o", "addr"], capture_output=True, text=True, timeout=10, check=False)
        for line in result.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[2] in ("inet", "inet6"):
                found.add(parts[3].split("/")[0])
    if_inet6 = Path("/proc/net/if_inet6")
    if if_inet6.exists():
        for line in if_inet6.read_text().splitlines():
            raw = line.split()[0]
            found.add(str(ipaddress.IPv6Address(bytes.fromhex(raw))))
    usable = []
    for text in found:
        address = ipaddress.ip_address(text)
        if not (address.is_loopback or address.is_link_local or address.is_unspecified):
            usable.append(text)
    return sorted(usable)


# -- listening sockets -----------------------------------------------------------------------------
def test_listens_on_loopback_only(served: Served) -> None:
    addresses = served.server.bound_addresses
    assert addresses, "no listening socket"
    assert all(ipaddress.ip_address(host).is_loopback for host, _port in addresses)
    assert {port for _host, port in addresses} == {served.server.port}
    assert ("127.0.0.1", served.server.port) in addresses
    if ipv6_loopback_available():
        assert ("::1", served.server.port) in addresses
    for sock in served.server.sockets:  # what the kernel says, not what we asked for
        assert ipaddress.ip_address(sock.getsockname()[0]).is_loopback


def test_health_answers_on_both_loopback_addresses(served: Served, http: httpx.Client) -> None:
    port = served.server.port
    response = http.get(f"http://127.0.0.1:{port}/v6/health")
    assert response.status_code == 200 and response.json()["status"] == "ok"
    if ipv6_loopback_available():
        response = http.get(f"http://[::1]:{port}/v6/health")
        assert response.status_code == 200 and response.json()["status"] == "ok"
    # localhost resolves locally (hosts file) to one of the two
    assert http.get(f"http://localhost:{port}/v6/health").status_code == 200


def test_keep_alive_responses_do_not_stall(served: Served, http: httpx.Client) -> None:
    """Sockets declared as TCP get TCP_NODELAY from asyncio; without it every keep-alive response waited ~40 ms for
    the client's delayed ACK.  What the suite checks is the cause (the sockets are TCP, so asyncio sets NODELAY on
    every accepted connection); the latency itself is `make bench-endpoint`'s."""
    assert served.server.sockets and all(sock.proto == socket.IPPROTO_TCP for sock in served.server.sockets)
    url = f"{served.url}/v6/health"
    assert all(http.get(url).status_code == 200 for _ in range(3))  # one kept-alive connection serves them all


def test_other_local_addresses_are_refused(served: Served) -> None:
    addresses = non_loopback_addresses()
    if not addresses:
        pytest.skip("this machine has no non-loopback address to try")
    for address in addresses:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(3)
            with pytest.raises(OSError):
                sock.connect((address, served.server.port))


def test_a_port_in_use_is_a_clear_error() -> None:
    taken = bind_loopback(0)
    try:
        with pytest.raises(EnvironmentProblem) as caught:
            bind_loopback(taken[0].getsockname()[1])
        assert "already in use" in caught.value.message and caught.value.fix
    finally:
        for sock in taken:
            sock.close()


def test_real_http_errors_keep_the_json_shape(served: Served, http: httpx.Client) -> None:
    url = served.url
    assert_error(http.get(f"{url}/v6/jobs"), 401, "unauthorized")
    assert_error(http.get(f"{url}/v6/jobs", headers={"Host": "evil.com"}), 421, "misdirected_request")
    assert_error(http.get(f"{url}/v6/jobs", headers={"Origin": "null"}), 403, "origin_not_allowed")
    assert_error(http.get(f"{url}/v6/nothing-here", headers=served.auth()), 404, "not_found")
    jobs = http.get(f"{url}/v6/jobs", headers=served.auth()).json()
    assert (jobs["queue_depth"], jobs["parked"], jobs["failures"]) == (0, 0, [])


def test_http10_request_without_host_is_misdirected(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.server.port), timeout=5) as sock:
        sock.sendall(b"GET /v6/health HTTP/1.0\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 421 ")
    assert b'"misdirected_request"' in data


def test_server_stops_quickly_and_frees_the_port(vault: Vault, token: str) -> None:
    server = EndpointServer(lambda port: create_app(vault, token=token, port=port), 0)
    server.start()
    port = server.port
    server.stop()
    server.stop()  # idempotent
    assert server.stop_signal is None  # stopped by stop(), not by a signal
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(OSError):
        sock.settimeout(2)
        sock.connect(("127.0.0.1", port))


# -- Host over real sockets ------------------------------------------------------------------------
@dataclass
class RawAnswer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def raw_request(address: str, port: int, request: bytes) -> RawAnswer:
    """Send ``request`` byte for byte (no client library rewrites the Host header) and read the whole answer."""
    with socket.create_connection((address, port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = _unchunk(body)
    return RawAnswer(int(status_line.split()[1]), headers, body)


def _unchunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out += rest[:size]
        data = rest[size + 2 :]
    return out


def http_bytes(method: str, path: str, host: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@pytest.fixture(scope="module")
def host_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One real server for the whole Host list: each case only reads, or is refused before it could write."""
    vault = open_vault(tmp_path_factory.mktemp("hosts") / "vault")
    token = vault.endpoint_token()
    server = EndpointServer(lambda port: create_app(vault, token=token, port=port), 0)
    server.start()
    try:
        yield Served(server, vault, token)
    finally:
        server.stop()
        vault.close()


@pytest.mark.parametrize("template", HARDENING_HOSTS, ids=lambda h: h.replace("{port}", "PORT") or "empty")
def test_every_hardening_host_over_real_sockets(host_server: Served, template: str) -> None:
    """What a DNS-rebinding page or a confused client actually puts on the wire: 421 before routing and before
    the token, or an ordinary answer for the loopback names with our port — as the in-process matrix expects."""
    served = host_server
    port = served.server.port
    host = template.format(port=port)
    allowed = host_is_allowed(host, port)
    # a request naming [::1] arrives over ::1 when this machine has it, like a client that resolved it would
    address = "::1" if host.startswith("[::1]") and ipv6_loopback_available() else "127.0.0.1"
    auth = {"Authorization": f"Bearer {served.token}"}
    event = {"conversation_id": "hosts", "content": f"Host check {template or 'empty'}: I live in Lisbon."}
    cases = [
        ("GET", "/v6/health", {}, b"", 200),
        ("GET", "/v6/jobs", auth, b"", 200),
        ("GET", "/v6/jobs", {}, b"", 401),  # the Host is judged before the token
        ("POST", "/v6/ingest", {**auth, "Content-Type": "application/json"}, json.dumps(event).encode(), 202),
        ("DELETE", "/v6/facts/1", {**auth, "Content-Type": "text/plain"}, b"", 415),  # and before the type
    ]
    for method, path, headers, body, ok in cases:
        assert served.vault.jobs.wait_idle(120)  # the enrichment of an accepted ingest must not move the numbers
        seq, counts = served.vault.changes.last_seq, table_counts(served.vault)
        answer = raw_request(address, port, http_bytes(method, path, host, headers, body))
        where = f"{method} {path} Host {host!r}"
        assert not [h for h in answer.headers if h.startswith("access-control-")], where
        if allowed:
            assert answer.status == ok, f"{where}: {answer.status} {answer.body!r}"
            continue
        assert answer.status == 421, f"{where}: {answer.status} {answer.body!r}"
        error = answer.json()["error"]
        assert error["code"] == "misdirected_request" and str(port) in error["details"]["fix"], where
        assert served.vault.changes.last_seq == seq and table_counts(served.vault) == counts, where


# -- token -----------------------------------------------------------------------------------------
@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
def test_token_file_is_private_after_first_start(served: Served) -> None:
    token_path = served.vault.paths.token
    assert (token_path.stat().st_mode & 0o777) == 0o600
    assert token_path.read_text().strip() == served.token


def test_rotation_takes_effect_on_a_running_server(served: Served, http: httpx.Client) -> None:
    url = f"{served.url}/v6/jobs"
    assert http.get(url, headers=served.auth()).status_code == 200
    new = rotate_token(served.vault.paths.token)  # what `cairn token --rotate` does from another process
    assert new != served.token
    assert_error(http.get(url, headers=served.auth()), 401, "unauthorized")
    assert http.get(url, headers=served.auth(new)).status_code == 200
    if os.name != "nt":
        assert (served.vault.paths.token.stat().st_mode & 0o777) == 0o600
    newer = served.vault.rotate_endpoint_token()  # and the vault's own rotation
    assert_error(http.get(url, headers=served.auth(new)), 401)
    assert http.get(url, headers=served.auth(newer)).status_code == 200


def test_deleted_token_file_fails_closed(served: Served, http: httpx.Client) -> None:
    served.vault.paths.token.unlink()
    assert_error(http.get(f"{served.url}/v6/jobs", headers=served.auth()), 401)
    assert http.get(f"{served.url}/v6/health").status_code == 200  # health stays public
    fresh = served.vault.endpoint_token()  # recreated
    assert http.get(f"{served.url}/v6/jobs", headers=served.auth(fresh)).status_code == 200


# -- CORS ------------------------------------------------------------------------------------------
def test_preflight_from_evil_origin_has_no_allow_origin(served: Served, http: httpx.Client) -> None:
    for path in ("/v6/jobs", "/v6/health", "/v6/ingest"):
        response = http.options(
            f"{served.url}{path}",
            headers={
                "Origin": "http://evil.com",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert_error(response, 403, "origin_not_allowed")
        assert "access-control-allow-origin" not in response.headers
        assert not [h for h in response.headers if h.lower().startswith("access-control-")]


# -- logs and failures -----------------------------------------------------------------------------
def test_logs_never_contain_the_token_or_the_body(
    served: Served, http: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # everything, every logger
    url, auth = served.url, served.auth()
    body = {"content": CANARY, "note": CANARY}
    json_headers = {**auth, "Content-Type": "application/json"}
    responses = [
        http.get(f"{url}/v6/health"),
        http.get(f"{url}/v6/jobs", headers=auth),
        http.get(f"{url}/v6/jobs", params={"q": CANARY}, headers=auth),
        http.post(f"{url}/v6/ingest", json=body, headers=auth),
        http.post(
            f"{url}/v6/ingest",
            content=CANARY.encode(),
            headers={**auth, "Content-Type": "text/plain"},
        ),
        http.post(f"{url}/v6/ingest", content=(CANARY * 2_000_000).encode(), headers=json_headers),
        http.post(f"{url}/v6/{CANARY}", json=body, headers=auth),
        http.get(f"{url}/v6/jobs", headers={"Authorization": f"Bearer {CANARY}"}),
        http.get(f"{url}/v6/jobs", headers={**auth, "Host": f"{CANARY}.evil.com"}),
        http.get(f"{url}/v6/jobs", headers={**auth, "Origin": f"http://{CANARY}.example"}),
    ]
    assert [r.status_code for r in responses] == [200, 200, 200, 400, 415, 413, 404, 401, 421, 403]
    rotate_token(served.vault.paths.token)
    new = served.vault.paths.token.read_text().strip()
    assert http.get(f"{url}/v6/jobs", headers=served.auth(new)).status_code == 200
    # the test's own HTTP client (httpx, httpcore) logs its URLs; everything else is the server side
    server_records = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))]
    logged = "\n".join(f"{r.name} {r.getMessage()} {r.args} {r.exc_text or ''}" for r in server_records)
    assert "refused a request: 415" in logged  # the guard did log; it just says nothing secret
    for secret in (served.token, new, CANARY, "Authorization", "Bearer "):
        assert secret not in logged, secret
    for response in responses:
        assert served.token not in response.text and new not in response.text


@pytest.fixture
def idle_served(tmp_path: Path, offline_settings: Settings) -> Iterator[Served]:
    """Served like ``served``, but the vault runs no background jobs: the job runner would trip
    over the table the test below breaks on purpose, and log that on its own schedule."""
    vault = Vault.open(tmp_path / "idle", settings=offline_settings, start_workers=False)
    token = vault.endpoint_token()
    server = EndpointServer(lambda port: create_app(vault, token=token, port=port), 0)
    server.start()
    try:
        yield Served(server, vault, token)
    finally:
        server.stop()
        vault.close()


def test_a_failing_route_is_a_generic_500_that_logs_the_type_only(
    idle_served: Served, http: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    served = idle_served
    caplog.set_level(logging.DEBUG)
    seed(served.vault)
    served.vault.store.write(lambda tx: tx.execute("ALTER TABLE jobs RENAME TO jobs_gone"))
    before = table_counts(served.vault)
    response = http.get(f"{served.url}/v6/jobs", headers=served.auth())
    error = assert_error(response, 500, "internal_error")
    assert "jobs" not in str(error) and "SELECT" not in response.text
    assert "OperationalError" in caplog.text
    assert "no such table" not in caplog.text and "SELECT" not in caplog.text
    assert table_counts(served.vault) == before
    # the server keeps serving (health needs the queue depth too, so it fails the same way)
    assert_error(http.get(f"{served.url}/v6/health"), 500, "internal_error")
    assert_error(http.get(f"{served.url}/v6/jobs"), 401)


def test_a_serving_process_sets_its_start_up_heap_aside() -> None:
    """``cairn serve`` freezes what start-up made, so no full collection traverses it again while requests wait, and
    collects the young generation less often.  Run in a fresh interpreter: freezing this one would change every test
    after it."""
    script = (
        "import gc, json\n"
        "import engine.api.app\n"
        "from engine.api.server import GEN0_THRESHOLD, set_aside_startup_heap\n"
        "tracked = len(gc.get_objects())\n"
        "set_aside_startup_heap()\n"
        "state = [tracked, gc.get_freeze_count(), len(gc.get_objects()), gc.get_threshold(), GEN0_THRESHOLD]\n"
        "print(json.dumps(state))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).parents[3],
    )
    tracked, frozen, left, threshold, gen0 = json.loads(out.stdout.strip().splitlines()[-1])
    assert tracked > 50_000  # the app's modules: what each full collection used to traverse
    assert frozen >= tracked * 0.9 and left < 1_000
    assert threshold[0] == gen0 > 700
