"""A vault only its owner can read (HARDENING "Privacy"): under the usual umask every folder Cairn makes in the vault
is 0700 and every file 0600 — the database and its WAL, the token, settings, logs, backups, the parser's work files —
on a new vault and, tightened at open, on an existing one; ``cairn doctor`` reports and fixes looser modes; a killed
process's work files are swept at the next open.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.logs import PrivateRotatingFileHandler
from app.plugins import build_plugin_manager
from engine import Settings, Vault
from engine.backups import make_backup
from engine.doctor import check_open_vault
from engine.events import EventIn
from engine.permissions import private_dir

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")

OFFLINE = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The umask most desktops run with: without care, every new file is readable by every account."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def modes(root: Path) -> dict[str, int]:
    """Every path under ``root`` (itself as ".") with its permission bits."""
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            out[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return out


def open_vault(root: Path) -> Vault:
    return Vault.open(root, settings=OFFLINE, plugins=build_plugin_manager(load_entry_points=False))


def assert_private(root: Path) -> dict[str, int]:
    found = modes(root)
    loose = {name: f"{mode:o}" for name, mode in found.items() if mode & 0o077}
    assert loose == {}, loose
    for name, mode in found.items():
        path = root / name
        assert mode == (0o700 if path.is_dir() else 0o600), (name, f"{mode:o}")
    return found


def test_a_new_vault_and_everything_it_writes_is_owner_only(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    vault = open_vault(root)
    try:
        assert vault.tightened_at_open == ()  # a new vault has nothing to tighten: it is made private
        vault.events.ingest(EventIn(conversation_id="c", content="I live in Hanoi."))
        vault.documents.upload(text="# Notes\n\nThe spare key is under the blue pot.", name="notes.md")
        vault.documents.upload(data=b"%PDF-1.4 " + b"x" * 70_000, name="big.pdf")  # handed over through work/
        assert vault.jobs.wait_idle(120)
        vault.endpoint_token()
        vault.update_settings({"llm.openai_api_key": "sk-local-secret"})
        make_backup(vault.store, vault.paths.backups, 3)
        private_dir(vault.paths.logs)  # as app.logs.setup_logging makes it
        handler = PrivateRotatingFileHandler(vault.paths.logs / "cairn.log", maxBytes=200, backupCount=2)
        try:
            for i in range(20):  # rotates: every new file is private too
                handler.emit(logging.LogRecord("t", logging.INFO, __file__, 1, f"line {i} " * 5, None, None))
        finally:
            handler.close()
        found = assert_private(root)  # while open: vault.db-wal and -shm exist now
        assert {"vault.db", "vault.db-wal", "token", "settings.toml"} <= set(found)
        assert any(name.startswith("backups/") for name in found)
        assert any(name.startswith("logs/cairn.log.") for name in found)
        assert vault.paths.work.is_dir() and found["work"] == 0o700
    finally:
        vault.close()
    assert_private(root)


def test_an_existing_vault_is_tightened_at_open_and_doctor_says_so(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    with open_vault(root) as vault:
        vault.events.ingest(EventIn(conversation_id="c", content="I live in Hanoi."))
        assert vault.jobs.wait_idle(120)
        make_backup(vault.store, vault.paths.backups, 3)
    for name in modes(root):  # as a copy, a restore or an older Cairn would leave it
        path = root / name
        os.chmod(path, 0o755 if path.is_dir() else 0o644)

    from engine.doctor import run_doctor

    report = run_doctor(root)  # without the vault open: found and fixed on the spot
    (finding,) = [f for f in report.findings if f.check == "permissions"]
    assert finding.status == "warn" and "were readable by others" in finding.detail and "made private" in finding.detail
    assert_private(root)

    for name in modes(root):
        path = root / name
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    with open_vault(root) as vault:
        assert_private(root)
        tightened = {item.path for item in vault.tightened_at_open}
        assert root / "vault.db" in tightened and root in tightened
        (finding,) = [f for f in check_open_vault(vault).findings if f.check == "permissions"]
        assert finding.status == "warn" and "made private" in finding.detail
    with open_vault(root) as vault:
        (finding,) = [f for f in check_open_vault(vault).findings if f.check == "permissions"]
        assert finding.status == "ok" and vault.tightened_at_open == ()


def test_a_symlink_in_the_vault_folder_is_neither_followed_nor_changed(tmp_path: Path) -> None:
    outside = tmp_path / "shared.txt"
    outside.write_text("not the vault's")
    os.chmod(outside, 0o644)
    root = tmp_path / "vault"
    root.mkdir()
    (root / "link.txt").symlink_to(outside)
    with open_vault(root) as vault:
        assert {item.path for item in vault.tightened_at_open} == {root}  # made by hand, 0755
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644


def test_work_a_killed_process_left_is_swept_at_the_next_open(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    with open_vault(root):
        pass
    left = root / "work" / "cairn-parse-abc123"
    left.mkdir(parents=True)
    (left / "job-1").write_bytes(b"the whole text of a private document")
    (root / "work" / "stray").write_bytes(b"x")
    with open_vault(root) as vault:
        assert list(vault.paths.work.iterdir()) == []
        document = vault.documents.upload(data=b"# Title\n\n" + b"word " * 20_000, name="long.md")
        assert vault.jobs.wait_idle(120)
        assert vault.documents.get(document.document_id).info.status == "ready"
        made = list(vault.paths.work.iterdir())
        assert all(p.name.startswith("cairn-parse-") for p in made)  # the sandbox works inside the vault
    assert not any(p.name.startswith("job-") for p in (root / "work").rglob("*"))


def test_files_that_come_and_go_while_the_folder_is_read_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A temporary file (a token being written, a backup in progress) may vanish between listing and checking."""
    from engine import permissions

    root = tmp_path / "vault"
    root.mkdir(mode=0o700)
    (root / "kept").write_text("x")
    os.chmod(root / "kept", 0o644)
    listed = permissions._walk(root)
    monkeypatch.setattr(permissions, "_walk", lambda _root: [*listed, root / ".token.1.abc.tmp"])
    assert [item.path.name for item in permissions.loosened(root)] == ["kept"]
    assert [item.path.name for item in permissions.tighten(root)] == ["kept"]
