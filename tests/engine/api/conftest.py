"""Fixtures for endpoint tests: the in-process app, a real loopback server, shared assertions."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlean

from app.plugins import build_plugin_manager
from engine import Settings, Vault
from engine.api.app import create_app
from engine.api.server import EndpointServer

#: In-process tests use no socket: the port only enters the Host allow-list.
PORT = 8642

#: The Host values of HARDENING.md ("Localhost endpoint"), ``{port}`` standing for the server's port.  The
#: in-process matrix and the real-socket test both take them from here, so they test the same list.
HARDENING_HOSTS = (
    "evil.com",
    "evil.com:{port}",
    "",
    ":{port}",
    "localhost.evil.com",
    "127.0.0.1.nip.io",
    "[::1]:{port}",
    "LOCALHOST:{port}",
    "0.0.0.0:{port}",
)
#: The loopback names the guard accepts, with the server's port; the name is case-insensitive.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def host_is_allowed(host: str, port: int) -> bool:
    """Whether the guard must let a request with this Host header through (the test's own statement of the rule)."""
    return host.lower() in {f"{name}:{port}" for name in LOOPBACK_NAMES}


def assert_error(response: httpx.Response, status: int, code: str | None = None) -> dict[str, object]:
    """The response is the endpoint's JSON error with ``status`` (and ``code``); returns it."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    payload = response.json()
    assert set(payload) == {"error"}
    error = payload["error"]
    assert set(error) == {"code", "message", "details"}
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["details"], dict)
    assert "Traceback" not in response.text
    if code is not None:
        assert error["code"] == code
    return dict(error)


def table_counts(vault: Vault) -> dict[str, int]:
    """Row counts of every ordinary table of the vault (FTS and vector shadow tables aside)."""
    names = [
        row[0]
        for row in vault.store.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND sql NOT LIKE 'CREATE VIRTUAL%' AND name NOT LIKE '%_fts_%' "
            "AND name NOT LIKE 'vec_%'"
        )
    ]
    return {name: int(vault.store.scalar(f'SELECT COUNT(*) FROM "{name}"')) for name in names}


class CommitWatch:
    """Notices any commit to the vault's database, by any connection, for the price of one PRAGMA.

    SQLite's ``PRAGMA data_version`` changes on a connection whenever another connection has committed a change to
    the file since it last asked (an empty transaction does not count).  This connection is read-only and never
    writes, so every change of the value is somebody else's commit: the writer's, or anything that went around it.
    """

    def __init__(self, vault: Vault) -> None:
        uri = vault.paths.db.resolve().as_uri() + "?mode=ro"
        self._conn: Any = sqlean.connect(uri, uri=True, check_same_thread=False)

    def version(self) -> int:
        """The current value; compare two readings to know whether anything committed in between."""
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def close(self) -> None:
        self._conn.close()


def seed(vault: Vault) -> None:
    """A few rows, so that "unchanged" is about real rows and not an empty database."""

    def write(tx):  # type: ignore[no-untyped-def]
        sid = tx.new_id("subject")
        tx.execute(
            "INSERT INTO subjects(id, user_id, name, created_at, updated_at) VALUES (?, 'u', 'Ann', 0, 0)",
            (sid,),
        )
        cid = tx.new_id("collection")
        tx.execute(
            "INSERT INTO collections(id, user_id, name, created_at, updated_at) VALUES (?, 'u', 'c', 0, 0)",
            (cid,),
        )

    vault.store.write(write)


#: Offline and quick: the rule path, the hashing embedder, a short parse timeout.
OFFLINE = {
    "llm.provider": "simple",
    "embedder.provider": "hashing",
    "documents.parse_timeout_s": 5.0,
    "watch.debounce_s": 0.2,
}


def open_vault(folder: Path, **settings: object) -> Vault:
    """A real vault with the built-in parser plugins (documents can be uploaded)."""
    return Vault.open(
        folder,
        settings=Settings().updated({**OFFLINE, **settings}),
        plugins=build_plugin_manager(load_entry_points=False),
    )


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    """A real vault in a temp folder, offline, with the built-in parsers."""
    opened = open_vault(tmp_path / "vault")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def token(vault: Vault) -> str:
    return vault.endpoint_token()


@pytest.fixture
def auth(token: str) -> dict[str, str]:
    """The Authorization header of the vault's token."""
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def client(vault: Vault, token: str) -> Iterator[httpx.Client]:
    """The real app in process, addressed as http://127.0.0.1:PORT (a valid Host)."""
    from starlette.testclient import TestClient

    app = create_app(vault, token=token, port=PORT)
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as test_client:
        yield test_client


@dataclass
class Served:
    server: EndpointServer
    vault: Vault
    token: str

    @property
    def url(self) -> str:
        return self.server.address

    def auth(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.token}"}


@pytest.fixture
def served(vault: Vault, token: str) -> Iterator[Served]:
    """The real app served by uvicorn on a free loopback port, in a background thread."""
    server = EndpointServer(lambda port: create_app(vault, token=token, port=port), 0)
    server.start()
    try:
        yield Served(server, vault, token)
    finally:
        server.stop()


# The memory proxy's fixtures (a served endpoint in front of the fake Ollama / OpenAI server) for its test modules.
from tests.engine.api.proxy_support import remembered, via_ollama, via_openai  # noqa: E402, F401
