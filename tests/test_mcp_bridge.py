"""The stdio ↔ endpoint bridge of ``cairn mcp`` against a real served endpoint: a session the endpoint ended is
opened again without the client noticing, malformed lines get JSON-RPC errors, another vault's Cairn on the port
is never used, and an endpoint that goes away answers every waiting request with an error saying so."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.mcp_bridge import SESSION_HEADER, Bridge, RunningEndpoint, running_endpoint
from app.plugins import build_plugin_manager
from engine import Settings, Vault
from engine.api.app import create_app
from engine.api.server import EndpointServer

SETTINGS = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})


def rpc(method: str, params: dict[str, Any] | None = None, id: int | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if id is not None:
        message["id"] = id
    return json.dumps(message).encode() + b"\n"


INITIALIZE = rpc(
    "initialize",
    {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bridge-test", "version": "1"}},
    id=1,
)
INITIALIZED = rpc("notifications/initialized")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Vault, EndpointServer]]:
    with Vault.open(tmp_path / "vault", settings=SETTINGS, plugins=build_plugin_manager(load_entry_points=False)) as v:
        token = v.endpoint_token()
        v.vault_id()
        server = EndpointServer(lambda port: create_app(v, token=token, port=port), 0)
        server.start()
        try:
            SETTINGS.updated({"endpoint.port": server.port}).save(v.paths.settings)
            yield v, server
        finally:
            server.stop()


def answers(out: io.BytesIO) -> dict[Any, dict[str, Any]]:
    return {m.get("id"): m for m in (json.loads(line) for line in out.getvalue().splitlines())}


def test_a_session_the_endpoint_ended_is_opened_again(served: tuple[Vault, EndpointServer]) -> None:
    vault, server = served
    endpoint = running_endpoint(vault.paths.root)
    assert endpoint == RunningEndpoint(f"http://127.0.0.1:{server.port}/mcp", vault.endpoint_token())
    out = io.BytesIO()
    bridge = Bridge(endpoint, out)
    ended: list[str] = []

    def stdin() -> Iterator[bytes]:
        yield INITIALIZE
        yield INITIALIZED
        yield b"this is not json\n"
        yield b"[1, 2]\n"
        # the endpoint ends the session (a restart, or an eviction past its session limit)
        session = bridge._session
        assert session is not None
        httpx.delete(endpoint.url, headers={"authorization": f"Bearer {endpoint.token}", SESSION_HEADER: session})
        ended.append(session)
        yield rpc("tools/list", {}, id=2)

    assert bridge.run(stdin()) == 0  # type: ignore[arg-type]
    got = answers(out)
    assert got[1]["result"]["serverInfo"]["name"] == "cairn"
    assert "recall_context" in {t["name"] for t in got[2]["result"]["tools"]}
    errors = sorted(
        m["error"]["code"] for m in json.loads(b"[" + b",".join(out.getvalue().splitlines()) + b"]") if "error" in m
    )
    assert errors == [-32700, -32600]
    assert ended and bridge._session not in (None, ended[0])


def test_an_endpoint_that_goes_away_answers_each_waiting_request(served: tuple[Vault, EndpointServer]) -> None:
    vault, server = served
    endpoint = running_endpoint(vault.paths.root)
    assert endpoint is not None
    out = io.BytesIO()

    def stdin() -> Iterator[bytes]:
        yield INITIALIZE
        yield INITIALIZED
        server.stop()
        yield rpc("tools/call", {"name": "list_conversations", "arguments": {}}, id=7)

    assert Bridge(endpoint, out).run(stdin()) == 1  # type: ignore[arg-type]
    error = answers(out)[7]["error"]
    assert "stopped answering" in error["message"]


def test_another_vaults_cairn_on_the_port_is_not_used(served: tuple[Vault, EndpointServer], tmp_path: Path) -> None:
    _vault, server = served
    with Vault.open(tmp_path / "other", settings=SETTINGS) as other:
        other.vault_id()
        SETTINGS.updated({"endpoint.port": server.port}).save(other.paths.settings)
        other.endpoint_token()
    assert running_endpoint(tmp_path / "other") is None  # the port answers for a different vault
    assert running_endpoint(tmp_path / "nothing-here") is None
