"""``GET /v6/health`` names the vault it serves by a stable random id (never its path), over a real loopback socket."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from app.runtime import make_endpoint
from tests.engine.api.conftest import open_vault


def _health(port: int) -> dict[str, object]:
    response = httpx.get(f"http://127.0.0.1:{port}/v6/health", timeout=10.0)
    assert response.status_code == 200, response.text
    payload: dict[str, object] = response.json()
    return payload


def test_health_carries_the_vault_id_which_survives_a_restart_and_differs_between_vaults(tmp_path: Path) -> None:
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    seen: list[str] = []
    for folder in (first_dir, first_dir, second_dir):
        vault = open_vault(folder)
        server = make_endpoint(vault, 0)
        try:
            server.start()
            health = _health(server.port)
        finally:
            server.stop()
            vault.close()
        vault_id = health["vault_id"]
        assert isinstance(vault_id, str) and re.fullmatch(r"[0-9a-f]{12}", vault_id), health
        assert str(tmp_path) not in str(health) and "first" not in vault_id  # nothing of the path
        seen.append(vault_id)
    assert seen[0] == seen[1], "the id changed when the vault was opened again"
    assert seen[2] != seen[0], "two vaults share an id"
