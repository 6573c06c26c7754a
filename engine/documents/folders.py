"""Folders seen from the vault: ``vault.watcher`` (:class:`WatchApi`) and the :class:`FolderSink` it drives.

The watcher decides what changed; :class:`VaultFolderSink` turns that into document uploads and deletions, keeps the
``files`` table (path, size, mtime, hash → document) that reconciliation compares against, and forwards progress and
warnings (``ingest.progress``, ``watch.*``) to the change feed for the GUI and SSE clients.  :class:`WatchApi` keeps
the watched folders in ``settings.toml`` and the running watcher in step, and ingests files and folders by hand.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.config import Settings, WatchedFolder
from engine.documents.ingest import IngestProgress, collect, ingest as ingest_files
from engine.documents.service import DocumentsApi, PathNotAllowed
from engine.errors import NotFound, UnsupportedFile, ValidationError, VaultError
from engine.store import Store, Tx
from engine.watching import FolderWatcher
from engine.watching.contract import FileState, RootStatus, ScanResult

log = logging.getLogger(__name__)

_OUTCOME = {
    "processing": "ok",
    "ready": "ok",
    "degraded": "degraded",
    "quarantined": "quarantined",
    "unchanged": "unchanged",
}


class VaultFolderSink:
    """Implements :class:`engine.watching.contract.FolderSink` over the documents service."""

    def __init__(
        self, store: Store, documents: DocumentsApi, emit: Callable[..., Any], user_id: str = "default"
    ) -> None:
        self._store = store
        self._documents = documents
        self._emit = emit
        self._user_id = user_id

    def indexed_files(self, root: Path) -> dict[Path, FileState]:
        """The files of ``root`` the vault holds, as last ingested."""
        rows = self._store.query(
            "SELECT path, size_bytes, mtime_ns, content_hash FROM files WHERE root = ?", (str(root),)
        )
        return {Path(r[0]): FileState(int(r[1]), int(r[2]), r[3]) for r in rows}

    def ingest_file(self, path: Path, root: Path, state: FileState) -> str:
        """Upload (or re-upload) the file and record what was ingested.

        The file must lead inside ``root`` (``within``): the watcher never hands over a link out of the folder, and
        if one was swapped in since it looked, the upload refuses it unread and the file is skipped.
        """
        try:
            result = self._documents.upload(path=path, user_id=self._user_id, source=f"watch:{root}", within=root)
        except (UnsupportedFile, PathNotAllowed):
            outcome, document_id, status = "skipped", None, "pending"
        except VaultError as exc:
            log.warning("watched file could not be ingested: %s", type(exc).__name__)
            raise
        else:
            outcome = _OUTCOME.get(result.status, "ok")
            document_id = result.document_id
            status = {"ok": "indexed", "unchanged": "indexed"}.get(outcome, outcome)

        def record(tx: Tx) -> None:
            tx.execute(
                "INSERT INTO files(path, root, size_bytes, mtime_ns, content_hash, document_id, state, seen_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET root = excluded.root, "
                "size_bytes = excluded.size_bytes, mtime_ns = excluded.mtime_ns, content_hash = excluded.content_hash, "
                "document_id = COALESCE(excluded.document_id, files.document_id), state = excluded.state, "
                "seen_at = excluded.seen_at",
                (
                    str(path),
                    str(root),
                    state.size,
                    state.mtime_ns,
                    state.content_hash,
                    document_id,
                    "pending" if status == "skipped" else status,
                    tx.now,
                ),
            )

        self._store.write(record)
        return outcome

    def remove_file(self, path: Path, root: Path) -> None:
        """The file is gone from the folder: delete its document and forget the file."""
        rows = self._store.query("SELECT document_id FROM files WHERE path = ?", (str(path),))
        document_id = rows[0][0] if rows else None
        if document_id is not None:
            try:
                self._documents.delete(int(document_id))
            except VaultError:
                pass  # already deleted by hand
        self._store.write(lambda tx: tx.execute("DELETE FROM files WHERE path = ?", (str(path),)))

    def report(self, event: str, data: Mapping[str, object]) -> None:
        """Forward watcher progress and warnings to the change feed."""
        self._emit(event, None, **dict(data))


class WatchApi:
    """``vault.watcher``: folders kept in sync with the vault, and files ingested by hand.

    A watched folder is a setting (``watch.folders``): :meth:`watch` and :meth:`unwatch` save it through
    ``update_settings``, which brings the running watcher along with :meth:`rewatch`, so the app's settings page,
    the endpoint and these methods all take one path.
    """

    def __init__(
        self,
        store: Store,
        documents: DocumentsApi,
        emit: Callable[..., Any],
        settings: Callable[[], Settings],
        update_settings: Callable[[dict[str, Any]], Settings],
    ) -> None:
        self._documents = documents
        self._emit = emit
        self._settings = settings
        self._update_settings = update_settings
        self._watcher = FolderWatcher(VaultFolderSink(store, documents, emit), settings().watch)

    def start(self) -> None:
        """Scan the watched folders and follow them from now on."""
        self._watcher.start()

    def stop(self) -> None:
        """Stop watching (scans under way finish)."""
        self._watcher.stop()

    def watch(
        self, path: str | Path, *, include: Sequence[str] | None = None, exclude: Sequence[str] | None = None
    ) -> list[RootStatus]:
        """Keep ``path`` in sync with the vault (saved in settings; scanned now, then watched).

        Raises:
            ValidationError: not a folder, or overlapping a watched one.
        """
        folder_path = Path(path).expanduser()
        if not folder_path.is_dir():
            raise ValidationError("path", f"{folder_path} is not a folder")
        defaults = WatchedFolder(path=str(folder_path.resolve()))
        folder = WatchedFolder(
            path=defaults.path,
            include=tuple(include) if include else defaults.include,
            exclude=tuple(exclude) if exclude else defaults.exclude,
        )
        others = [f for f in self._settings().watch.folders if Path(f.path) != Path(folder.path)]
        self._update_settings({"watch.folders": [f.model_dump(mode="json") for f in (*others, folder)]})
        return self._watcher.status()

    def unwatch(self, path: str | Path, *, forget: bool = False) -> list[RootStatus]:
        """Stop watching ``path``; its documents stay unless ``forget``."""
        resolved = Path(path).expanduser().resolve()
        self._watcher.unwatch(resolved, forget=forget)
        kept = [f for f in self._settings().watch.folders if Path(f.path) != resolved]
        self._update_settings({"watch.folders": [f.model_dump(mode="json") for f in kept]})
        return self._watcher.status()

    def rescan(self, path: str | Path | None = None, *, timeout: float | None = None) -> ScanResult:
        """Reconcile a watched folder (or all) with the vault now."""
        return self._watcher.scan(path, timeout=timeout)

    def status(self) -> list[RootStatus]:
        """Each watched folder's state and last scan result."""
        return self._watcher.status()

    def confirm_deletions(self, path: str | Path) -> ScanResult:
        """Delete the documents of files that vanished from ``path`` (held until confirmed)."""
        return self._watcher.confirm_deletions(path)

    def cancel_deletions(self, path: str | Path) -> None:
        """Keep the documents of vanished files; resume normal watching."""
        self._watcher.cancel_deletions(path)

    def ingest_paths(
        self,
        paths: Sequence[str | Path],
        *,
        user_id: str = "default",
        collection_id: int | None = None,
        project_id: str | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[IngestProgress]:
        """Ingest files and folders once (walked with the default globs), yielding progress after each file."""
        return ingest_files(
            self._documents,
            collect(paths),
            self._emit,
            user_id=user_id,
            collection_id=collection_id,
            project_id=project_id,
            should_stop=should_stop or (lambda: False),
        )

    def rewatch(self, old: Sequence[WatchedFolder], new: Sequence[WatchedFolder]) -> None:
        """Bring the running watcher from the folders ``old`` to ``new``, all or nothing (``update_settings``).

        Raises:
            ValidationError: a new folder is missing, not absolute or overlaps another; the watcher is put back.
        """
        before = {_folder_key(f): f for f in old}
        after = {_folder_key(f): f for f in new}
        for key, folder in after.items():
            if key not in before and not Path(key).is_dir():
                raise ValidationError(
                    "watch.folders", f"{folder.path} is not a folder", fix="Choose a folder that exists."
                )
        removed = [folder for key, folder in before.items() if key not in after]
        changed = [folder for key, folder in after.items() if before.get(key) != folder]
        unwatched: list[WatchedFolder] = []
        watched: list[WatchedFolder] = []
        try:
            for folder in removed:  # first, so that a folder may be swapped for one inside or around it
                self._unwatch_quietly(folder)
                unwatched.append(folder)
            for folder in changed:
                self._watcher.watch(folder)
                watched.append(folder)
        except VaultError:
            for folder in watched:
                previous = before.get(_folder_key(folder))
                if previous is None:
                    self._unwatch_quietly(folder)
                else:
                    self._watcher.watch(previous)
            for folder in unwatched:
                self._watcher.watch(folder)
            raise

    def _unwatch_quietly(self, folder: WatchedFolder) -> None:
        """Stop watching ``folder`` (its documents stay); a folder the watcher no longer has is fine."""
        try:
            self._watcher.unwatch(_folder_key(folder))
        except NotFound:
            pass


def _folder_key(folder: WatchedFolder) -> str:
    """A watched folder's path as the watcher keys it (``~`` expanded, normalised, links kept)."""
    return os.path.normpath(os.path.expanduser(folder.path.strip()))
