"""``cairn export``, ``cairn restore`` and ``cairn backups`` through the real command in child processes: an export
while another process holds the vault, a restore into a new folder that answers like the original, a refusal to
overwrite, and backups listed with the way to restore one."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from app.plugins import build_plugin_manager
from engine import Settings, Vault
from engine.events import EventIn
from tests.cli_support import child_env

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX processes")

REPO = Path(__file__).resolve().parents[1]
SETTINGS = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})


def cairn(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=REPO,
        env=child_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_export_while_the_vault_is_held_then_restore_and_list_backups(tmp_path: Path) -> None:
    home, vault_dir, archive = tmp_path / "home", tmp_path / "vault", tmp_path / "cairn-export.zip"
    with Vault.open(vault_dir, settings=SETTINGS, plugins=build_plugin_manager(load_entry_points=False)) as held:
        held.events.ingest(
            [
                EventIn(conversation_id="c", content="I live in Porto.", occurred_at="2024-04-01T10:00:00Z"),
                EventIn(conversation_id="c", content="I work as a welder.", occurred_at="2024-04-01T10:01:00Z"),
            ]
        )
        assert held.jobs.wait_idle(60)
        held.backups.now()
        counts = held.counts()
        # the vault stays open here, as the desktop app keeps it: the export reads beside it
        exported = cairn("export", str(archive), "--vault", str(vault_dir), home=home)
        assert exported.returncode == 0, exported.stderr
        listed = cairn("backups", "--vault", str(vault_dir), home=home)
    assert f"Exported to {archive}" in exported.stdout and "2 events" in exported.stdout
    assert "Traceback" not in exported.stderr
    assert zipfile.ZipFile(archive).testzip() is None

    assert listed.returncode == 0, listed.stderr
    (backup,) = sorted((vault_dir / "backups").glob("vault-*.db"))
    assert str(backup) in listed.stdout and "cairn restore FILE --vault NEW_FOLDER" in listed.stdout

    restored = cairn("restore", str(archive), "--vault", str(tmp_path / "restored"), home=home)
    assert restored.returncode == 0, restored.stderr
    assert "Restored archive into" in restored.stdout and f"cairn --vault {tmp_path / 'restored'}" in restored.stdout
    with Vault.open(tmp_path / "restored", settings=SETTINGS) as again:
        assert again.counts() == counts
        assert {f.object_text for f in again.facts(limit=10)} == {"Porto", "welder"}

    from_backup = cairn("restore", str(backup), "--vault", str(tmp_path / "from-backup"), home=home)
    assert from_backup.returncode == 0, from_backup.stderr
    assert "Restored backup into" in from_backup.stdout

    again = cairn("restore", str(archive), "--vault", str(tmp_path / "restored"), home=home)
    assert again.returncode == 1
    assert "already holds a vault; a restore never overwrites anything" in again.stderr
    assert "Traceback" not in again.stderr
    nowhere = cairn("restore", str(archive), home=home)
    assert nowhere.returncode == 1 and "--vault NEW_FOLDER" in nowhere.stderr


def test_export_and_backups_name_a_path_without_a_vault(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for args in (("export", str(tmp_path / "a.zip")), ("backups",)):
        result = cairn(*args, "--vault", str(tmp_path / "missing"), home=home)
        assert result.returncode == 1, result.stdout
        assert f"There is no vault at {tmp_path / 'missing'}" in result.stderr
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "missing").exists() and not (tmp_path / "a.zip").exists()
