"""The ``cairn`` command: version, doctor, token, paths (in-process through typer's runner, real files)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from app.cli import app
from engine import Settings, Vault
from engine.store.migrations import SCHEMA_VERSION
from engine.version import __version__

runner = CliRunner()


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"cairn {__version__}"


def test_token_is_created_0600_and_rotates(tmp_path: Path) -> None:
    vault_dir = tmp_path / "v"
    first = runner.invoke(app, ["token", "--vault", str(vault_dir)])
    assert first.exit_code == 0
    token = first.output.strip()
    assert len(token) >= 40
    token_file = vault_dir / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert runner.invoke(app, ["token", "--vault", str(vault_dir)]).output.strip() == token
    rotated = runner.invoke(app, ["token", "--vault", str(vault_dir), "--rotate"])
    assert rotated.exit_code == 0
    new = rotated.output.strip().splitlines()[-1]
    assert new != token and token_file.read_text() == new
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600


def test_doctor_reports_every_check_and_passes_on_a_healthy_setup(tmp_path: Path) -> None:
    env = {"CAIRN_LLM_PROVIDER": "simple", "CAIRN_EMBEDDER_PROVIDER": "hashing", "COLUMNS": "200"}
    result = runner.invoke(app, ["doctor", "--vault", str(tmp_path / "v")], env=env)
    assert result.exit_code == 0, result.output
    for check in ("python", "sqlite", "fts5", "sqlite-vec", "vault", "ollama", "embedder", "endpoint", "token"):
        assert check in result.output
    assert "sqlite-vec v0." in result.output


def test_doctor_fails_when_something_essential_is_wrong(tmp_path: Path) -> None:
    vault_dir = tmp_path / "v"
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    with Vault.open(vault_dir, settings=settings) as v:
        v.store.write(lambda tx: tx.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}"))
    result = runner.invoke(
        app,
        ["doctor", "--vault", str(vault_dir)],
        env={"CAIRN_LLM_PROVIDER": "simple", "CAIRN_EMBEDDER_PROVIDER": "hashing", "COLUMNS": "200"},
    )
    assert result.exit_code == 1
    assert "newer than this Cairn" in result.output


def test_doctor_flags_a_world_readable_token(tmp_path: Path) -> None:
    vault_dir = tmp_path / "v"
    vault_dir.mkdir()
    (vault_dir / "token").write_text("secret-token-value")
    os.chmod(vault_dir / "token", 0o644)
    result = runner.invoke(
        app,
        ["doctor", "--vault", str(vault_dir)],
        env={"CAIRN_LLM_PROVIDER": "simple", "CAIRN_EMBEDDER_PROVIDER": "hashing", "COLUMNS": "200"},
    )
    assert result.exit_code == 1
    assert "chmod 600" in result.output
    assert "secret-token-value" not in result.output


def test_paths_lists_vault_files(tmp_path: Path) -> None:
    result = runner.invoke(app, ["paths", "--vault", str(tmp_path / "v")])
    assert result.exit_code == 0
    assert str(tmp_path / "v" / "vault.db") in result.output


def test_user_errors_print_message_and_fix_without_traceback(tmp_path: Path) -> None:
    vault_dir = tmp_path / "v"
    vault_dir.mkdir()
    (vault_dir / "vault.db").write_bytes(b"not a database at all" * 10)
    env = dict(os.environ, CAIRN_LLM_PROVIDER="simple", CAIRN_EMBEDDER_PROVIDER="hashing")
    proc = subprocess.run(
        [sys.executable, "-m", "app", "serve", "--vault", str(vault_dir), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 1
    assert "not a SQLite database" in proc.stderr and "fix:" in proc.stderr
    assert "Traceback" not in proc.stderr
