"""The ``cairn`` command: version, doctor, token, paths (in-process through typer's runner, real files)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app import cli
from app.cli import app
from engine import Settings, Vault
from engine.store.migrations import SCHEMA_VERSION
from engine.version import __version__

runner = CliRunner()


@pytest.fixture(autouse=True)
def _unwrapped_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's consoles took their width when the module was imported; temp paths differ in length from one
    machine (or test worker) to the next, so the commands run here print without wrapping."""
    monkeypatch.setattr(cli.console, "width", 1000)
    monkeypatch.setattr(cli.err, "width", 1000)


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"cairn {__version__}"


def test_token_is_created_0600_and_rotates(tmp_path: Path) -> None:
    vault_dir = tmp_path / "v"
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    Vault.open(vault_dir, settings=settings).close()  # `cairn token` prints an existing vault's token only
    assert not (vault_dir / "token").exists()  # made on first use
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
    env = {"CAIRN_LLM_PROVIDER": "simple", "CAIRN_EMBEDDER_PROVIDER": "hashing", "COLUMNS": "1000"}
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
        env={"CAIRN_LLM_PROVIDER": "simple", "CAIRN_EMBEDDER_PROVIDER": "hashing", "COLUMNS": "1000"},
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
        env={"CAIRN_LLM_PROVIDER": "simple", "CAIRN_EMBEDDER_PROVIDER": "hashing", "COLUMNS": "1000"},
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


def test_a_bad_chroma_address_is_refused_before_anything_starts(tmp_path: Path) -> None:
    """A setting the Chroma client would trip over later is named, with its fix, before the vault is touched."""
    vault_dir = tmp_path / "v"
    vault_dir.mkdir()
    (vault_dir / "settings.toml").write_text('[vectors]\nbackend = "chroma"\nchroma_url = "localhost:8000"\n')
    env = dict(os.environ, CAIRN_LLM_PROVIDER="simple", CAIRN_EMBEDDER_PROVIDER="hashing")
    proc = subprocess.run(
        [sys.executable, "-m", "app", "serve", "--vault", str(vault_dir), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 1
    assert "vectors.chroma_url" in proc.stderr and "http://127.0.0.1:8000" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (vault_dir / "vault.db").exists()
    doctor = runner.invoke(app, ["doctor", "--vault", str(vault_dir)], env={**env, "COLUMNS": "1000"})
    assert doctor.exit_code == 1
    assert "vectors.chroma_url" in doctor.output


# -- cairn import ---------------------------------------------------------------------------------------------------
IMPORT_ENV = {"CAIRN_LLM_PROVIDER": "simple", "CAIRN_EMBEDDER_PROVIDER": "hashing", "COLUMNS": "1000"}


def _stored_events(vault_dir: Path) -> list[tuple[str, str | None, str]]:
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    with Vault.open(vault_dir, settings=settings, start_workers=False) as v:
        return [
            (str(r[0]), r[1], str(r[2])) for r in v.store.query("SELECT conversation_id, author, source FROM events")
        ]


def test_import_shows_progress_and_a_summary_and_adds_nothing_the_second_time(tmp_path: Path) -> None:
    from tests.plugins import importer_samples as samples

    vault_dir = tmp_path / "v"
    export = samples.write_json(tmp_path / "conversations.json", samples.chatgpt_conversations())
    log = tmp_path / "friday.txt"
    log.write_text(samples.TEXT_BRACKETS, encoding="utf-8")

    first = runner.invoke(app, ["import", "--vault", str(vault_dir), str(export), str(log)], env=IMPORT_ENV)
    assert first.exit_code == 0, first.output
    # progress on stderr, one line per conversation when stderr is not a terminal
    assert "conversations.json: 1/2 conversations — Lisbon trip" in first.stderr
    assert "conversations.json: 2/2 conversations — Sums" in first.stderr
    assert "friday.txt: 1/1 conversations — friday" in first.stderr
    # the summary on stdout
    assert "conversations.json (chatgpt): 2 conversations, 8 turns added, 0 already there" in first.stdout
    assert "friday.txt (text): 1 conversations, 3 turns added, 0 already there" in first.stdout
    assert "2 files: 3 conversations, 11 turns added, 0 already there, 0 not imported" in first.stdout

    again = runner.invoke(app, ["import", "--vault", str(vault_dir), str(export), str(log)], env=IMPORT_ENV)
    assert again.exit_code == 0, again.output
    assert "2 files: 3 conversations, 0 turns added, 11 already there, 0 not imported" in again.stdout
    events = _stored_events(vault_dir)
    assert len(events) == 11
    assert {source for _c, _a, source in events} == {"import:chatgpt", "import:text"}
    assert {author for c, author, _s in events if c == "text:friday"} == {"Alice", "Bob"}


def test_import_of_a_malformed_file_says_where_and_exits_non_zero(tmp_path: Path) -> None:
    vault_dir = tmp_path / "v"
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        '{"role": "user", "content": "I live in Porto.", "conversation_id": "good", "occurred_at": 1714557600}\n'
        '{"role": "user", "content": "Second turn", "conversation_id": "bad", "occurred_at": 1714557600}\n'
        '{"role": "narrator", "content": "Once upon a time", "conversation_id": "bad", "occurred_at": 1714557601}\n',
        encoding="utf-8",
    )
    truncated = tmp_path / "export.json"
    truncated.write_text('[{"id": "c1", "mapping": {"root": {"message": null, "parent": null,\n', encoding="utf-8")
    unknown = tmp_path / "notes.bin"
    unknown.write_bytes(b"\x00\x01binary")

    result = runner.invoke(
        app,
        ["import", "--vault", str(vault_dir), str(broken), str(truncated), str(unknown)],
        env=IMPORT_ENV,
    )
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    # one bad conversation: the others are imported, the bad one is named by line and imported not at all
    assert "broken.jsonl (jsonl): 1 conversations, 1 turns added, 0 already there" in result.stdout
    assert "not imported: broken.jsonl line 3 (conversation bad): role 'narrator' is not one of" in result.stdout
    # a file that cannot be read at all: the line and column of the JSON error
    assert "not imported: export.json: invalid JSON at line 2 column 1" in result.stdout
    # a file of no known format: the error and the formats that are known
    assert "error: notes.bin: notes.bin is not a transcript format Cairn knows." in result.stderr
    assert "fix: Supported formats: chatgpt" in result.stderr
    assert "3 files: 1 conversations, 1 turns added, 0 already there, 3 not imported" in result.stdout
    assert _stored_events(vault_dir) == [("good", None, "import:jsonl")]
