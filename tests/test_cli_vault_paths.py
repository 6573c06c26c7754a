"""Mistyped vault paths and unreadable inputs, through the real ``cairn`` command in child processes.

A file, a folder of someone's other files, a missing folder or a read-only one given as ``--vault`` is named with its
fix, never a traceback; ``cairn token`` and ``cairn doctor`` never make a vault; ``cairn doctor`` tells this vault's
endpoint from another vault's Cairn on the same port; ``cairn ingest`` exits 1 when a file fails and names the
folders it could not read.

Read-only and unreadable folders need an unprivileged process (root may write anywhere): run as root, the command
runs as the folders' owner without privileges, in a user namespace (``unshare --map-user``).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli_support import child_env

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX permissions and signals")

REPO = Path(__file__).resolve().parents[1]


def cairn(*args: str, home: Path, unprivileged: bool = False, **extra: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m app ARGS`` to its end (stdin closed: ``mcp`` ends at once when it gets that far)."""
    command = [sys.executable, "-m", "app", *args]
    if unprivileged:
        command = unprivileged_prefix() + command
    return subprocess.run(
        command,
        cwd=REPO,
        env=child_env(home, **extra),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def unprivileged_prefix() -> list[str]:
    """How to run a command without the power to ignore file modes (the test's own user when it is not root)."""
    if os.geteuid() != 0:
        return []
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("running as root without unshare: modes cannot be tested")
    prefix = [unshare, "--user", "--map-user=65534", "--map-group=65534"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"running as root and user namespaces are unavailable: {probe.stderr!r}")
    return prefix


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def snapshot(folder: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path under ``folder`` with its mode and (files) content: to prove nothing was touched."""
    found: dict[str, tuple[int, bytes | None]] = {}
    for path in [folder, *sorted(folder.rglob("*"))]:
        info = path.lstat()
        content = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
        found[str(path.relative_to(folder))] = (stat.S_IMODE(info.st_mode), content)
    return found


def said(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout + result.stderr


def assert_refused(result: subprocess.CompletedProcess[str], *words: str) -> None:
    text = said(result)
    assert result.returncode == 1, text
    assert "Traceback" not in text, text
    for word in words:
        assert word in text, text


def make_vault(folder: Path, home: Path) -> None:
    """A real vault with one note in it, made in this process (what the commands under test meet is the folder
    Cairn leaves: a vault.db, a token, private modes).  Made here rather than by a child ``cairn ingest``, which
    would spend seconds importing the engine for every read-only case."""
    from app.plugins import build_plugin_manager
    from engine import Settings, Vault

    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    with Vault.open(folder, settings=settings, plugins=build_plugin_manager(load_entry_points=False)) as vault:
        vault.endpoint_token()
        vault.documents.upload(name="note.md", text="# Note\n\nThe heron nests by the old mill.\n")
        assert vault.jobs.wait_idle(60)
    (folder.parent / f"{folder.name}-note.md").write_text("# Note\n\nThe heron nests by the old mill.\n")
    assert (folder / "vault.db").is_file()


# -- a file, a folder of other files ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ("serve", "--port", "0"),
        ("mcp",),
        ("doctor",),
        ("token",),
        ("ingest", "NOTE"),
        ("import", "NOTE"),
    ],
    ids=lambda args: args[0],
)
def test_a_file_given_as_the_vault_is_named_with_its_fix(tmp_path: Path, args: tuple[str, ...]) -> None:
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("my notes")
    note = tmp_path / "note.md"
    note.write_text("# A note\n")
    argv = [str(note) if a == "NOTE" else a for a in args]
    result = cairn(*argv, "--vault", str(not_a_folder), home=tmp_path / "home")
    assert_refused(result, "is not a folder, so it cannot be a vault", "--vault")
    assert not_a_folder.read_text() == "my notes"
    result = cairn(*argv, "--vault", str(not_a_folder / "vault"), home=tmp_path / "home")
    assert_refused(result, f"({not_a_folder} is a file)")


@pytest.mark.parametrize("command", ["serve", "doctor", "token", "ingest"])
def test_a_folder_of_other_files_is_not_turned_into_a_vault(tmp_path: Path, command: str) -> None:
    documents = tmp_path / "Documents"
    documents.mkdir()
    (documents / "letter.txt").write_text("Dear Ann")
    os.chmod(documents / "letter.txt", 0o644)
    os.chmod(documents, 0o755)
    before = snapshot(documents)
    argv = {"serve": ["serve", "--port", "0"], "ingest": ["ingest", str(documents / "letter.txt")]}.get(
        command, [command]
    )
    result = cairn(*argv, "--vault", str(documents), home=tmp_path / "home")
    assert_refused(result, "is not a Cairn vault: it holds other files and no vault.db", "new or empty folder")
    assert snapshot(documents) == before, "the folder was changed (a vault made in it, its files made private)"


# -- token and doctor never make a vault ------------------------------------------------------------------------
def test_token_on_a_path_without_a_vault_says_so_and_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    missing = tmp_path / "vualt"
    result = cairn("token", "--vault", str(missing), home=home)
    assert_refused(result, f"There is no vault at {missing}", "cairn serve --vault")
    assert not missing.exists()
    # without --vault: the default vault, which nobody has started, is not made either
    result = cairn("token", home=home)
    assert_refused(result, f"There is no vault at {home / 'vault'}")
    assert not home.exists()
    # an empty folder (or one holding only a token from an older Cairn) is no vault either
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_refused(cairn("token", "--vault", str(empty), home=home), "holds no vault.db")
    assert list(empty.iterdir()) == []
    # once Cairn has made the vault there, its token is printed, and rotated on request
    make_vault(empty, home)
    first = cairn("token", "--vault", str(empty), home=home)
    assert first.returncode == 0, said(first)
    assert first.stdout.strip() == (empty / "token").read_text()
    rotated = cairn("token", "--vault", str(empty), "--rotate", home=home)
    assert rotated.returncode == 0, said(rotated)
    assert rotated.stdout.strip() == (empty / "token").read_text() != first.stdout.strip()


def test_doctor_on_a_missing_folder_warns_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "vualt"
    result = cairn("doctor", "--vault", str(missing), home=tmp_path / "home")
    assert result.returncode == 0, said(result)  # a first start would create it: a warning, not an error
    assert f"no vault at {missing} yet" in result.stdout
    assert "If you meant an existing vault" in result.stdout
    assert not missing.exists()


def test_commands_that_open_a_vault_say_when_they_made_a_new_one(tmp_path: Path) -> None:
    home, note, folder = tmp_path / "home", tmp_path / "note.md", tmp_path / "new-vault"
    note.write_text("# Note\n\nThe kettle is blue.\n")
    result = cairn("ingest", str(note), "--vault", str(folder), home=home)
    assert result.returncode == 0, said(result)
    assert f"there was no vault at {folder}, so a new, empty one was created there" in result.stderr
    assert "not read:" not in result.stderr
    again = cairn("ingest", str(note), "--vault", str(folder), home=home)
    assert again.returncode == 0, said(again)
    assert "new, empty one" not in again.stderr


# -- read-only folders ----------------------------------------------------------------------------------------------
def _read_only(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        os.chmod(path, mode & ~0o222)


def _writable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        os.chmod(path, stat.S_IMODE(path.lstat().st_mode) | 0o200)


@pytest.fixture
def read_only_vault(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "vault"
    make_vault(folder, tmp_path / "home")
    _read_only(folder)
    try:
        yield folder
    finally:
        _writable(folder)


@pytest.mark.parametrize("command", ["serve", "mcp", "ingest", "doctor"])
def test_a_read_only_vault_is_named_with_its_fix(tmp_path: Path, read_only_vault: Path, command: str) -> None:
    argv = {"serve": ["serve", "--port", "0"], "ingest": ["ingest", str(tmp_path / "vault-note.md")]}.get(
        command, [command]
    )
    before = snapshot(read_only_vault)
    result = cairn(*argv, "--vault", str(read_only_vault), home=tmp_path / "home", unprivileged=True)
    assert_refused(result, f"{read_only_vault} is read-only", "Make the folder writable")
    assert snapshot(read_only_vault) == before


def test_token_reads_a_read_only_vault_but_cannot_rotate_it(tmp_path: Path, read_only_vault: Path) -> None:
    home = tmp_path / "home"
    shown = cairn("token", "--vault", str(read_only_vault), home=home, unprivileged=True)
    assert shown.returncode == 0, said(shown)
    assert shown.stdout.strip() == (read_only_vault / "token").read_text()
    rotated = cairn("token", "--rotate", "--vault", str(read_only_vault), home=home, unprivileged=True)
    assert_refused(rotated, "is read-only", "Make the folder writable")
    assert (read_only_vault / "token").read_text() == shown.stdout.strip()


def test_a_vault_that_cannot_be_created_under_a_read_only_folder_is_named(tmp_path: Path) -> None:
    parent = tmp_path / "shared"
    parent.mkdir()
    os.chmod(parent, 0o555)
    try:
        result = cairn(
            "serve", "--port", "0", "--vault", str(parent / "vault"), home=tmp_path / "home", unprivileged=True
        )
        assert_refused(result, f"{parent / 'vault'} cannot be created: {parent} is read-only")
    finally:
        os.chmod(parent, 0o755)


# -- cairn ingest: failures and unreadable folders ------------------------------------------------------------------
def test_ingest_exits_1_naming_failed_files_and_unreadable_folders(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "vault"
    docs = tmp_path / "docs"
    (docs / "private").mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\nThe lighthouse keeper paints in spring.\n")
    (docs / "private" / "b.md").write_text("# B\n\nThe attic holds a violin.\n")
    (docs / "locked.md").write_text("# C\n\nThe cellar floods in March.\n")
    os.chmod(docs / "private", 0o000)
    os.chmod(docs / "locked.md", 0o000)
    for path in (tmp_path, docs):
        os.chmod(path, 0o755)  # the unprivileged run must reach them
    folder.mkdir(mode=0o755)  # an empty folder: a new vault, writable for the unprivileged run
    try:
        result = cairn(
            "ingest", str(docs), str(tmp_path / "nope.md"), "--vault", str(folder), home=home, unprivileged=True
        )
    finally:
        os.chmod(docs / "private", 0o755)
        os.chmod(docs / "locked.md", 0o644)
    text = said(result)
    assert result.returncode == 1, text
    assert "Traceback" not in text
    assert "2 files: 1 ok, 0 unchanged, 0 degraded, 0 quarantined, 0 skipped, 1 failed" in result.stdout
    assert "locked.md" in result.stdout
    assert f"not read: {docs / 'private'}: Permission denied" in result.stderr
    assert f"not read: {tmp_path / 'nope.md'}: no such file or folder" in result.stderr
    assert "chmod -R u+rX" in result.stderr


# -- the endpoint's port held by another vault's Cairn --------------------------------------------------------------
@pytest.fixture
def other_cairn(tmp_path: Path) -> Iterator[tuple[int, str]]:
    """A real ``cairn serve`` of another vault on a fixed port; yields the port and that vault's id."""
    home, folder, port = tmp_path / "home", tmp_path / "other-vault", free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--vault", str(folder), "--port", str(port)],
        cwd=REPO,
        env=child_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, "cairn serve ended"
            assert time.monotonic() < deadline, "cairn serve did not answer"
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/v6/health", timeout=2).json()
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield port, str(health["vault_id"])
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _endpoint_row(doctor_output: str) -> str:
    [row] = [line for line in doctor_output.splitlines() if line.startswith("│ endpoint")]
    return row


def test_doctor_tells_this_vaults_endpoint_from_another_vaults(tmp_path: Path, other_cairn: tuple[int, str]) -> None:
    port, other_id = other_cairn
    home = tmp_path / "home"
    mine = tmp_path / "my-vault"
    make_vault(mine, home)
    result = cairn("doctor", "--vault", str(mine), home=home, CAIRN_ENDPOINT_PORT=str(port))
    row = _endpoint_row(result.stdout)
    assert "│ warn" in row and "held by another Cairn, serving a different vault" in row and other_id in row, row
    theirs = cairn("doctor", "--vault", str(tmp_path / "other-vault"), home=home, CAIRN_ENDPOINT_PORT=str(port))
    row = _endpoint_row(theirs.stdout)
    assert "│ ok" in row and "Cairn is serving this vault" in row, row


def test_token_without_a_vault_points_at_the_cairn_serving_the_port(
    tmp_path: Path, other_cairn: tuple[int, str]
) -> None:
    port, _other_id = other_cairn
    result = cairn("token", home=tmp_path / "elsewhere", CAIRN_ENDPOINT_PORT=str(port))
    assert_refused(result, "There is no vault at", f"A Cairn is serving another vault on port {port}")
    assert not (tmp_path / "elsewhere").exists()
