"""Which files a path may bring into the vault: links in watched folders, paths named by clients, system folders.

Real vaults, real folders, real symlinks (``notes.md → ../secrets/key.txt``, ``environ.txt → /proc/self/environ``,
loops).  What must hold: a watched folder never follows a link out of itself or into /proc, /sys or /dev (a link to
a file inside it is followed), a scan over link loops ends, and an upload of a path a client named reads only files
under the watched folders or ``documents.allowed_roots`` — anything else is refused unread, naming the setting.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.api.errors import status_of
from engine.documents.service import PathNotAllowed
from engine.errors import ValidationError
from engine.vault import Vault
from tests.engine.documents.support import fts_hits, open_vault, recall, settings_with
from tests.engine.watch_support import wait_until, write

pytestmark = pytest.mark.timeout(120)
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux")

QUIET = 20.0  # generous bound for "the watcher has caught up"
SECRET = "quokkasecret"  # a word only the file outside the folders holds


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A private file outside every folder Cairn is given."""
    return write(tmp_path / "private" / "key.txt", f"-----BEGIN KEY----- {SECRET} -----END KEY-----\n")


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with open_vault(tmp_path / "v") as opened:
        yield opened


def texts_of(vault: Vault) -> str:
    """Every stored span text, section title and document name, joined."""
    rows = vault.store.query(
        "SELECT text FROM spans UNION ALL SELECT title FROM sections UNION ALL SELECT name FROM documents"
    )
    return " ".join(str(r[0]) for r in rows)


# -- watched folders ---------------------------------------------------------------------------------------------
@linux_only
def test_a_watched_folder_follows_links_inside_it_and_never_out_of_it(
    tmp_path: Path, vault: Vault, secret: Path
) -> None:
    folder = tmp_path / "notes"
    write(folder / "garden.md", "# Garden\n\nThe espalier pears need twine.\n")
    write(folder / ".drafts" / "kept.md", "# Kept\n\nThe cellar holds forty jars of quince.\n")  # excluded by ".*"
    os.symlink(folder / ".drafts" / "kept.md", folder / "shown.md")  # a link inside the folder: followed
    os.symlink(secret, folder / "notes.md")  # out of the folder
    os.symlink(secret.parent, folder / "private-link")  # a folder out of it
    os.symlink("/proc/self/environ", folder / "environ.txt")  # into /proc
    os.symlink(folder / "loop-b.md", folder / "loop-a.md")  # a loop of links
    os.symlink(folder / "loop-a.md", folder / "loop-b.md")
    os.symlink(folder, folder / "again")  # the folder itself
    vault.watcher.watch(folder)
    result = vault.watcher.rescan(folder, timeout=60)
    names = sorted(d.name for d in vault.documents())
    assert names == ["garden.md", "shown.md"], names
    assert SECRET not in texts_of(vault) and fts_hits(vault, SECRET) == []
    assert not any(SECRET in b.content for b in recall(vault, f"what is the {SECRET} key").documents)
    files = {str(r[0]) for r in vault.store.query("SELECT path FROM files")}
    assert files == {str(folder / "garden.md"), str(folder / "shown.md")}
    assert "quince" in texts_of(vault)  # the link inside the folder was read
    refused = " ".join(result.errors)
    for link in ("notes.md", "private-link", "environ.txt"):
        assert f"{folder / link}: a link out of the watched folder, not followed" in refused


def test_a_file_swapped_for_a_link_out_of_the_folder_loses_its_document(
    tmp_path: Path, vault: Vault, secret: Path
) -> None:
    folder = tmp_path / "notes"
    write(folder / "garden.md", "# Garden\n\nThe espalier pears need twine.\n")
    write(folder / "kitchen.md", "# Kitchen\n\nThe sourdough starter wants feeding.\n")
    write(folder / "shed.md", "# Shed\n\nThe mower blades are blunt.\n")
    vault.watcher.watch(folder)
    vault.watcher.rescan(folder, timeout=60)
    assert len(vault.documents()) == 3
    (folder / "kitchen.md").unlink()
    os.symlink(secret, folder / "kitchen.md")
    result = vault.watcher.rescan(folder, timeout=60)  # at once: the folder has only just changed
    assert sorted(d.name for d in vault.documents()) == ["garden.md", "shed.md"]
    assert result.removed == 1 and SECRET not in texts_of(vault)


def test_a_running_watcher_drops_a_file_swapped_for_a_link_out_of_the_folder(tmp_path: Path, secret: Path) -> None:
    folder = tmp_path / "notes"
    write(folder / "garden.md", "# Garden\n\nThe espalier pears need twine.\n")
    write(folder / "kitchen.md", "# Kitchen\n\nThe sourdough starter wants feeding.\n")
    write(folder / "shed.md", "# Shed\n\nThe mower blades are blunt.\n")
    with open_vault(tmp_path / "v", start_workers=True) as vault:
        vault.watcher.watch(folder)
        wait_until(lambda: len(vault.documents()) == 3, QUIET)
        (folder / "kitchen.md").unlink()
        os.symlink(secret, folder / "kitchen.md")  # the file's events: the per-path check meets the link
        wait_until(lambda: sorted(d.name for d in vault.documents()) == ["garden.md", "shed.md"], QUIET)
        write(folder / "later.md", "# Later\n\nThe gate needs oil.\n")  # the watcher goes on as before
        wait_until(lambda: len(vault.documents()) == 3, QUIET)
        assert SECRET not in texts_of(vault) and fts_hits(vault, SECRET) == []


def test_the_sink_refuses_a_file_that_leads_out_of_its_folder_unread(
    tmp_path: Path, vault: Vault, secret: Path
) -> None:
    """The last line of defence: a link swapped in between the watcher's look and the read."""
    folder = tmp_path / "notes"
    folder.mkdir()
    link = folder / "notes.md"
    os.symlink(secret, link)
    with pytest.raises(PathNotAllowed, match="leads out of the watched folder") as raised:
        vault.documents.upload(path=link, within=folder)
    assert raised.value.details["setting"] == "watch.folders"
    assert vault.documents() == [] and vault.documents.quarantine() == []


# -- paths named by a client -------------------------------------------------------------------------------------
def test_a_client_path_outside_the_allowed_folders_is_refused_naming_the_setting(
    tmp_path: Path, vault: Vault, secret: Path
) -> None:
    with pytest.raises(PathNotAllowed) as raised:
        vault.documents.upload(path=secret, client_path=True)
    error = raised.value
    assert status_of(error) == 403 and error.code == "path_not_allowed"
    assert "documents.allowed_roots" in error.message and "documents.allowed_roots" in error.fix
    assert error.details == {"field": "path", "setting": "documents.allowed_roots"}
    assert vault.documents() == [] and vault.documents.quarantine() == []
    # the person's own uploads (ingest, drag and drop) are not confined
    assert vault.documents.upload(path=secret).status == "processing"


def test_a_client_path_in_an_allowed_root_or_a_watched_folder_is_read(tmp_path: Path, secret: Path) -> None:
    shared = write(tmp_path / "shared" / "manual.txt", "Grease the winch every spring.")
    watched = write(tmp_path / "notes" / "garden.md", "# Garden\n\nThe espalier pears need twine.\n")
    escape = tmp_path / "shared" / "escape.txt"
    os.symlink(secret, escape)  # inside the allowed root, leading out of it
    settings = settings_with(documents__allowed_roots=[str(tmp_path / "shared")])
    with open_vault(tmp_path / "v", settings=settings) as vault:
        vault.watcher.watch(tmp_path / "notes")
        assert vault.documents.upload(path=shared, client_path=True).status == "processing"
        assert vault.documents.upload(path=watched, client_path=True).status == "processing"
        with pytest.raises(PathNotAllowed, match="links count by where they lead"):
            vault.documents.upload(path=escape, client_path=True)
        assert SECRET not in texts_of(vault)


@linux_only
def test_system_folders_are_never_read_whatever_is_allowed(tmp_path: Path) -> None:
    link = tmp_path / "environ.txt"
    os.symlink("/proc/self/environ", link)
    with open_vault(tmp_path / "v", settings=settings_with(documents__allowed_roots=["/"])) as vault:
        for path in (Path("/proc/self/status"), link):
            for client_path in (True, False):
                with pytest.raises(PathNotAllowed, match="system folder"):
                    vault.documents.upload(path=path, client_path=client_path)
        assert vault.documents() == []


def test_allowed_roots_must_be_absolute_folders_outside_the_system_folders() -> None:
    assert settings_with(documents__allowed_roots=["~/Documents/", "/srv/docs"]).documents.allowed_roots == (
        os.path.expanduser("~/Documents"),
        "/srv/docs",
    )
    with pytest.raises(ValidationError, match=r"documents\.allowed_roots"):
        settings_with(documents__allowed_roots=["Documents"])
    with pytest.raises(ValidationError, match="system folder"):
        settings_with(documents__allowed_roots=["/proc/self"])


def test_an_ingested_folder_takes_links_inside_it_but_not_out_of_it(tmp_path: Path, vault: Vault, secret: Path) -> None:
    folder = tmp_path / "dropped"
    write(folder / "garden.md", "# Garden\n\nThe espalier pears need twine.\n")
    os.symlink(secret, folder / "notes.md")
    os.symlink(folder / "garden.md", folder / "again.md")
    last = list(vault.watcher.ingest_paths([folder]))[-1]
    assert (last.total, last.ok) == (1, 1)
    assert [d.name for d in vault.documents()] == ["garden.md"] and SECRET not in texts_of(vault)


def test_a_quarantined_path_replaced_by_a_link_is_not_retried(tmp_path: Path, vault: Vault, secret: Path) -> None:
    broken = tmp_path / "scan.md"
    broken.write_bytes(bytes(range(256)) * 8)  # binary: quarantined
    held = vault.documents.upload(path=broken)
    assert held.status == "quarantined" and held.quarantine_id is not None
    broken.unlink()
    os.symlink(secret, broken)
    with pytest.raises(ValidationError, match="replaced by a link"):
        vault.documents.retry(held.quarantine_id)
    assert vault.documents() == []
