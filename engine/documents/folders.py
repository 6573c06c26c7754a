"""Watched folders seen from the vault: the :class:`FolderSink` the folder watcher drives.

The watcher decides what changed; this sink turns that into document uploads and deletions, keeps the ``files``
table (path, size, mtime, hash → document) that reconciliation compares against, and forwards progress and
warnings (``ingest.progress``, ``watch.*``) to the change feed for the GUI and SSE clients.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from engine.documents.service import DocumentsApi, PathNotAllowed
from engine.errors import UnsupportedFile, VaultError
from engine.store import Store, Tx
from engine.watching.contract import FileState

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
