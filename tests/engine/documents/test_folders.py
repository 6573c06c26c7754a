"""Watched folders and ingest runs through the vault: real folders, real watchdog observers, real parses.

The vaults here read their settings from ``settings.toml`` (written once with the offline values and a 0.2 s
debounce), like the app does, so that what ``vault.watcher.watch`` saves is what the next open finds.  The folder
watcher's own behaviour (editor saves, storms, symlinks) is proven against an in-memory sink in
``tests/engine/test_watcher.py``; these tests prove the wiring to documents, recall and the change feed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from engine.changes import Change
from engine.documents.ingest import IngestProgress
from engine.forget import ForgetScope
from engine.vault import Vault
from tests.engine.documents.support import counts, finds, fts_hits, plugins_with, settings_with
from tests.engine.watch_support import hold_for, wait_until, write
from tests.plugins import parser_pdf as pdfs

pytestmark = pytest.mark.timeout(180)

QUIET = 60.0  # a hang guard for "the watcher has caught up" (it takes a second or two when idle)


@contextmanager
def opened(vault_dir: Path, *, start_workers: bool = True) -> Iterator[Vault]:
    """The vault at ``vault_dir`` opened the app's way: settings from its ``settings.toml``, no environment."""
    settings_file = vault_dir / "settings.toml"
    if not settings_file.exists():
        settings_with().save(settings_file)
    vault = Vault.open(vault_dir, plugins=plugins_with(), env={}, start_workers=start_workers)
    try:
        yield vault
    finally:
        vault.close()


def handbook(word: str) -> bytes:
    """A 10-page PDF (about 40 lines a page) with ``word`` in a sentence on page 7."""
    pages = []
    for page in range(1, 11):
        lines = [f"Chapter {page}: keeping the orchard ledger"]
        lines += [
            f"Line {n} of page {page} records an ordinary entry about crates, rows and weather." for n in range(1, 40)
        ]
        if page == 7:
            lines.append(f"The grafting wax recipe calls for {word} and beeswax.")
        pages.append(lines)
    return pdfs.text_pdf(pages)


def by_path(vault: Vault) -> dict[str, Any]:
    return {d.path: d for d in vault.documents()}


def resolved(*paths: Path) -> set[str]:
    return {str(p.resolve()) for p in paths}


def state_of(vault: Vault, folder: Path) -> str:
    return next(s.state for s in vault.watcher.status() if s.path == folder.resolve())


@pytest.fixture
def library(tmp_path: Path) -> Path:
    folder = tmp_path / "library"
    write(folder / "garden.md", "# Garden\n\nThe espalier pears need twine before the frost.\n")
    write(folder / "notes" / "kitchen.txt", "Kitchen notes\n\nThe sourdough starter lives on the top shelf.\n")
    (folder / "handbook.pdf").write_bytes(handbook("mastic"))
    write(folder / ".hidden.md", "# Hidden\n\nNever ingested: hidden files are excluded.\n")
    write(folder / "garden.md~", "an editor backup, excluded")
    write(folder / "photo.raw", "not a document type the folder includes")
    return folder


# -- files become documents; edits, deletions --------------------------------------------------------------------
def test_files_appear_as_documents_and_an_edit_is_recallable(tmp_path: Path, library: Path) -> None:
    """How soon an edit is recallable (target 2 s) is measured by `make bench-documents`; here: it is, each time."""
    documents = [library / "garden.md", library / "notes" / "kitchen.txt", library / "handbook.pdf"]
    with opened(tmp_path / "v") as vault:
        statuses = vault.watcher.watch(library)
        assert [s.path for s in statuses] == [library.resolve()]
        wait_until(lambda: set(by_path(vault)) == resolved(*documents), QUIET)
        handbook_doc = by_path(vault)[str((library / "handbook.pdf").resolve())]
        assert handbook_doc.page_count == 10
        source = vault.store.scalar("SELECT source FROM documents WHERE id = ?", (handbook_doc.id,))
        assert source == f"watch:{library.resolve()}"
        assert finds(vault, "mastic") and finds(vault, "twine") and finds(vault, "sourdough")
        wait_until(lambda: state_of(vault, library) == "ok", QUIET)
        for word in ("frankincense", "myrrhwood", "benzoinite"):
            target = library / "handbook.pdf"
            target.write_bytes(handbook(word))
            wait_until(lambda w=word: finds(vault, w), QUIET, interval=0.02)
        assert not finds(vault, "mastic") and fts_hits(vault, "mastic") == []
        assert len(vault.documents()) == 3, "an edit replaces the document, it does not add one"
        assert by_path(vault)[str(target.resolve())].id == handbook_doc.id


def test_a_deleted_file_removes_its_document(tmp_path: Path, library: Path) -> None:
    kitchen = library / "notes" / "kitchen.txt"
    with opened(tmp_path / "v") as vault:
        vault.watcher.watch(library)
        wait_until(lambda: len(vault.documents()) == 3, QUIET)
        doc = by_path(vault)[str(kitchen.resolve())]
        kitchen.unlink()
        wait_until(lambda: str(kitchen.resolve()) not in by_path(vault), QUIET)
        assert len(vault.documents()) == 2 and fts_hits(vault, "sourdough") == []
        assert not vault.store.query("SELECT 1 FROM files WHERE path = ?", (str(kitchen.resolve()),))
        assert not vault.store.query("SELECT 1 FROM spans WHERE document_id = ?", (doc.id,))


def test_a_vanished_folder_holds_deletions_until_confirmed(tmp_path: Path, library: Path) -> None:
    away = tmp_path / "unmounted"
    with opened(tmp_path / "v") as vault:
        vault.watcher.watch(library)
        wait_until(lambda: len(vault.documents()) == 3, QUIET)
        ids = {d.id for d in vault.documents()}
        os.rename(library, away)
        wait_until(lambda: state_of(vault, library) == "vanished", QUIET)
        assert vault.watcher.status()[0].held_deletions == 3
        hold_for(lambda: {d.id for d in vault.documents()} == ids, 1.0)
        vault.watcher.cancel_deletions(library)  # keep them: the drive will come back
        os.rename(away, library)
        wait_until(lambda: state_of(vault, library) == "ok", QUIET)
        assert {d.id for d in vault.documents()} == ids and finds(vault, "twine")
        os.rename(library, away)  # gone for good this time
        wait_until(lambda: state_of(vault, library) == "vanished", QUIET)
        hold_for(lambda: {d.id for d in vault.documents()} == ids, 0.5)
        result = vault.watcher.confirm_deletions(library)
        assert result.removed == 3
        assert vault.documents() == [] and fts_hits(vault, "twine") == []


def test_a_deleted_or_forgotten_document_stays_gone_while_its_file_is_unchanged(tmp_path: Path, library: Path) -> None:
    vault_dir = tmp_path / "v"
    garden, kitchen = library / "garden.md", library / "notes" / "kitchen.txt"
    with opened(vault_dir) as vault:
        vault.watcher.watch(library)
        wait_until(lambda: len(vault.documents()) == 3, QUIET)
        docs = by_path(vault)
        vault.documents.delete(docs[str(garden.resolve())].id)
        vault.forget(ForgetScope(document_id=docs[str(kitchen.resolve())].id))
        assert vault.watcher.rescan(library).added == 0
        assert set(by_path(vault)) == resolved(library / "handbook.pdf")
    with opened(vault_dir) as vault:  # the start-up scan does not bring them back either
        wait_until(lambda: vault.watcher.status()[0].last_result is not None, QUIET)
        wait_until(lambda: state_of(vault, library) == "ok", QUIET)
        assert set(by_path(vault)) == resolved(library / "handbook.pdf")
        assert not finds(vault, "twine") and not finds(vault, "sourdough")
        write(garden, "# Garden\n\nThe espalier pears need raffia now.\n")  # new content is a new document
        wait_until(lambda: finds(vault, "raffia"), QUIET)
        assert by_path(vault)[str(garden.resolve())].id != docs[str(garden.resolve())].id


# -- across restarts, settings, the change feed -------------------------------------------------------------------
def test_the_folder_list_survives_reopening_and_edits_made_while_closed_are_picked_up(
    tmp_path: Path, library: Path
) -> None:
    vault_dir = tmp_path / "v"
    garden, kitchen = library / "garden.md", library / "notes" / "kitchen.txt"
    with opened(vault_dir) as vault:
        vault.watcher.watch(library)
        wait_until(lambda: len(vault.documents()) == 3, QUIET)
        garden_id = by_path(vault)[str(garden.resolve())].id
    saved = tomllib.loads((vault_dir / "settings.toml").read_text(encoding="utf-8"))
    assert [f["path"] for f in saved["watch"]["folders"]] == [str(library.resolve())]
    # while the vault is closed: an edit, a new file, a deletion
    write(garden, "# Garden\n\nThe espalier pears need raffia, not twine.\n")
    write(library / "cellar.md", "# Cellar\n\nThe cider casks were racked in March.\n")
    kitchen.unlink()
    with opened(vault_dir) as vault:
        assert [f.path for f in vault.settings.watch.folders] == [str(library.resolve())]
        assert [s.path for s in vault.watcher.status()] == [library.resolve()]
        wait_until(
            lambda: set(by_path(vault)) == resolved(garden, library / "handbook.pdf", library / "cellar.md"), QUIET
        )
        wait_until(lambda: finds(vault, "raffia"), QUIET)
        assert by_path(vault)[str(garden.resolve())].id == garden_id
        assert finds(vault, "cider") and fts_hits(vault, "sourdough") == []


def test_ingest_progress_and_scan_results_appear_on_the_change_feed(tmp_path: Path, library: Path) -> None:
    seen: list[Change] = []
    lock = threading.Lock()

    def collect(changes: Any) -> None:
        with lock:
            seen.extend(changes)

    def named(kind: str) -> list[dict[str, Any]]:
        with lock:
            return [dict(c.data) for c in seen if c.type == kind]

    with opened(tmp_path / "v") as vault:
        unsubscribe = vault.changes.subscribe(collect)
        vault.watcher.watch(library)
        wait_until(lambda: any(s["added"] == 3 for s in named("watch.scanned")), QUIET)
        scanned = next(s for s in named("watch.scanned") if s["added"] == 3)
        assert scanned["root"] == str(library.resolve()) and scanned["quarantined"] == 0
        progress = named("ingest.progress")
        assert progress and all({"done", "total"} <= set(p) for p in progress)
        assert progress[-1]["done"] == progress[-1]["total"]
        assert len(named("document.processing")) >= 3
        wait_until(lambda: len(named("document.ready")) >= 3, QUIET)
        unsubscribe()


def test_unwatch_keeps_the_documents_and_stops_following_the_folder(tmp_path: Path, library: Path) -> None:
    vault_dir = tmp_path / "v"
    with opened(vault_dir) as vault:
        vault.watcher.watch(library)
        wait_until(lambda: len(vault.documents()) == 3, QUIET)
        ids = {d.id for d in vault.documents()}
        assert vault.watcher.unwatch(library) == []
        assert vault.watcher.status() == [] and vault.settings.watch.folders == ()
        write(library / "late.md", "# Late\n\nWritten after unwatching: the heron flew off.\n")
        (library / "garden.md").unlink()
        hold_for(lambda: {d.id for d in vault.documents()} == ids, 1.5)
        assert not finds(vault, "heron") and finds(vault, "twine")
    with opened(vault_dir) as vault:
        assert vault.watcher.status() == [] and {d.id for d in vault.documents()} == ids


def test_unwatch_with_forget_removes_the_folders_documents(tmp_path: Path, library: Path) -> None:
    with opened(tmp_path / "v") as vault:
        vault.watcher.watch(library)
        wait_until(lambda: len(vault.documents()) == 3, QUIET)
        elsewhere = vault.documents.upload(name="pasted.md", text="# Pasted\n\nThe kestrel hovered.")
        vault.watcher.unwatch(library, forget=True)
        assert [d.id for d in vault.documents()] == [elsewhere.document_id]
        assert fts_hits(vault, "twine") == [] and finds(vault, "kestrel")
        assert not vault.store.query("SELECT 1 FROM files")


# -- ingest runs --------------------------------------------------------------------------------------------------
@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """Three good files, a broken PDF, a PDF without text, and files the default globs leave out."""
    folder = tmp_path / "mixed"
    write(folder / "garden.md", "# Garden\n\nThe espalier pears need twine before the frost.\n")
    write(folder / "sub" / "page.html", "<h1>Page</h1><p>The weathervane points north.</p>")
    write(folder / "sub" / "log.txt", "Log\n\nThe generator was serviced on Friday.\n")
    (folder / "broken.pdf").write_bytes(pdfs.truncated(handbook("resin")))
    (folder / "scan.pdf").write_bytes(pdfs.text_pdf([[], []]))
    write(folder / ".secret.md", "hidden files are not ingested")
    write(folder / "model.bin", "not a document type")
    return folder


def test_ingest_paths_yields_progress_and_ends_with_counts(tmp_path: Path, mixed: Path) -> None:
    with opened(tmp_path / "v", start_workers=False) as vault:
        shelf = vault.collections.create("Shelf")
        seen: list[Change] = []
        vault.changes.subscribe(seen.extend)
        run: list[IngestProgress] = list(vault.watcher.ingest_paths([mixed], collection_id=shelf.id, project_id="home"))
        first, last = run[0], run[-1]
        assert (first.done, first.total, first.current) == (0, 5, "")
        assert [p.done for p in run] == list(range(6))
        files = ["broken.pdf", "garden.md", "scan.pdf", "sub/log.txt", "sub/page.html"]
        assert [p.current for p in run[1:]] == [str((mixed / f).resolve()) for f in files]
        assert last.finished and not run[-2].finished
        assert counts(last) == {"ok": 3, "degraded": 1, "quarantined": 1, "unchanged": 0, "skipped": 0, "failed": 0}
        assert len(last.problems) == 1 and last.problems[0].startswith("broken.pdf: quarantined (invalid")
        assert len(last.document_ids) == 4
        assert set(vault.collections.document_ids(shelf.id)) == set(last.document_ids)
        assert {d.project_id for d in vault.documents()} == {"home"}
        assert [q.name for q in vault.documents.quarantine()] == ["broken.pdf"]
        progress = [c.data for c in seen if c.type == "ingest.progress"]
        assert progress and progress[-1]["done"] == progress[-1]["total"] == 5
        again = list(vault.watcher.ingest_paths([mixed]))[-1]
        assert counts(again) == {"ok": 0, "degraded": 0, "quarantined": 1, "unchanged": 4, "skipped": 0, "failed": 0}
        assert len(vault.documents()) == 4


def test_the_ingest_command_prints_the_summary_and_exits_0(tmp_path: Path, mixed: Path) -> None:
    vault_dir = tmp_path / "cli-vault"
    env = {
        **os.environ,
        "CAIRN_LLM_PROVIDER": "simple",
        "CAIRN_EMBEDDER_PROVIDER": "hashing",
        "CAIRN_HOME": str(tmp_path / "home"),
        "COLUMNS": "1000",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "app", "ingest", str(mixed), "--vault", str(vault_dir), "--collection", "Imports"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert proc.returncode == 0, proc.stderr
    assert "5 files: 3 ok, 0 unchanged, 1 degraded, 1 quarantined, 0 skipped, 0 failed" in proc.stdout
    assert "broken.pdf: quarantined (invalid" in proc.stdout
    assert "Traceback" not in proc.stderr
    with Vault.open(vault_dir, settings=settings_with(), plugins=plugins_with(), start_workers=False) as vault:
        docs = vault.documents()
        assert len(docs) == 4
        assert sorted(d.status for d in docs) == ["degraded", "ready", "ready", "ready"]
        [imports] = vault.collections()
        assert imports.name == "Imports" and imports.documents == 4
        assert finds(vault, "weathervane")
    again = subprocess.run(
        [sys.executable, "-m", "app", "ingest", str(mixed), "--vault", str(vault_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert again.returncode == 0, again.stderr
    assert "5 files: 0 ok, 4 unchanged, 0 degraded, 1 quarantined" in again.stdout
