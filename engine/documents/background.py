"""Uploads read after their request has been answered (DESIGN §6).

A 300-page annual report takes a minute or more to parse; a client should not hold its request open for it, and a
person should see the document arrive at once.  So a large upload (``documents.background_above_bytes``, or any
upload a client asks not to wait for) is stored first as the document it will become: its row exists from the moment
the request is answered, status ``processing`` with ``metadata.reading`` set, and lists, the GUI and a client polling
``GET /v6/documents/{id}`` see it with its progress (pages read of pages).  One thread then reads the waiting uploads
in the order they came.

Nothing is lost on the way: the bytes wait in the vault's private ``uploads/<document id>/`` folder until the tree is
stored, and a vault opened after a crash or a quit reads again whatever was still waiting.  A document deleted while
it waited stays deleted: its result is dropped with its bytes.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from engine.documents import originals
from engine.documents.model import ReadProgress
from engine.permissions import private_dir, private_file

log = logging.getLogger(__name__)

#: The file holding the bytes of a waiting upload, and the one describing it.
PAYLOAD_FILE = "payload"
UPLOAD_FILE = "upload.json"
#: Progress is announced on the change feed at most this often per document (the GUI refreshes its list on it).
PROGRESS_EVERY_S = 1.0


@dataclass(frozen=True, slots=True)
class PendingRead:
    """An upload waiting to be read: what the upload said, so that a restart can finish it alike."""

    document_id: int
    name: str
    mime: str | None
    path: str | None  # the real path it was read from (uploads by path and watched files), else None
    user_id: str
    project_id: str | None
    collection_id: int | None
    source: str
    digest: str
    size: int
    new: bool  # the document was created by this upload (not a new version of one already stored)


class PendingFolder:
    """The waiting uploads: ``<folder>/<document id>/{payload, upload.json}``, private to the vault."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def keep(self, pending: PendingRead, payload: bytes) -> None:
        """Write an upload's bytes and description; the description last, so a half-written one is never resumed.

        Raises:
            OSError: the disk is full or the folder cannot be written.
        """
        home = private_dir(self.folder / str(int(pending.document_id)))
        data = home / PAYLOAD_FILE
        data.write_bytes(payload)
        private_file(data)
        described = home / (UPLOAD_FILE + ".tmp")
        described.write_text(json.dumps(asdict(pending)), encoding="utf-8")
        private_file(described)
        os.replace(described, home / UPLOAD_FILE)

    def load(self, document_id: int) -> tuple[PendingRead, bytes] | None:
        """A waiting upload's description and bytes; None when it is not (or no longer, or not wholly) there."""
        home = self.folder / str(int(document_id))
        try:
            described = json.loads((home / UPLOAD_FILE).read_text(encoding="utf-8"))
            return PendingRead(**described), (home / PAYLOAD_FILE).read_bytes()
        except (OSError, ValueError, TypeError):
            return None

    def drop(self, document_id: int) -> None:
        """Remove a waiting upload's bytes (read, refused, or its document deleted)."""
        shutil.rmtree(self.folder / str(int(document_id)), ignore_errors=True)

    def waiting(self) -> list[int]:
        """The documents with an upload waiting, oldest id first (one folder per document, as the originals')."""
        return sorted(originals.held(self.folder))


class BackgroundReader:
    """One thread reading waiting uploads in arrival order, and what each one's progress is.

    ``read(document_id, on_progress)`` does the work (parse, store); ``announce(document_id, progress)`` tells the
    change feed, at most once a second per document.  Closing stops after the document being read: the sandbox is
    closed under it, ``read`` sees :attr:`stopping` and leaves the upload waiting for the next open.
    """

    def __init__(
        self,
        read: Callable[[int, Callable[[int, int], None]], None],
        announce: Callable[[int, ReadProgress], None],
    ) -> None:
        self._read = read
        self._announce = announce
        self._queue: queue.Queue[int | None] = queue.Queue()
        self._progress: dict[int, ReadProgress] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    @property
    def stopping(self) -> bool:
        """True once :meth:`stop` was called: a read that ends now must not store or refuse anything."""
        return self._stopping.is_set()

    def submit(self, document_id: int) -> None:
        """Queue a document to be read (its bytes are already in the pending folder)."""
        with self._lock:
            if self._stopping.is_set():
                return  # read at the next open
            self._progress.setdefault(document_id, ReadProgress(0, None))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="cairn-document-reader", daemon=True)
                self._thread.start()
        self._queue.put(document_id)

    def progress(self, document_id: int) -> ReadProgress | None:
        """How far the document's reading has come; None when it is not waiting or being read in this process."""
        with self._lock:
            return self._progress.get(document_id)

    def waiting(self) -> int:
        """Documents queued or being read."""
        with self._lock:
            return len(self._progress)

    def stop(self) -> None:
        """Stop reading: the document being read is abandoned (it stays waiting on disk), the others wait too.
        Close the parser sandbox next, so that a long parse ends now, then :meth:`join`."""
        self._stopping.set()
        self._queue.put(None)

    def join(self, timeout: float = 30.0) -> None:
        """Wait for the reader's thread to end (after :meth:`stop`)."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _loop(self) -> None:
        while True:
            document_id = self._queue.get()
            if document_id is None or self._stopping.is_set():
                return
            try:
                self._read(document_id, self._reporter(document_id))
            except Exception:  # the reader must outlive one bad upload; read() records what it can
                log.exception("reading document %s in the background failed", document_id)
            finally:
                with self._lock:
                    self._progress.pop(document_id, None)

    def _reporter(self, document_id: int) -> Callable[[int, int], None]:
        """The progress callback of one document's parse: keeps the latest figure, tells the feed once a second."""
        last = -PROGRESS_EVERY_S

        def report(done: int, total: int) -> None:
            nonlocal last
            progress = ReadProgress(done, total)
            with self._lock:
                self._progress[document_id] = progress
            now = time.monotonic()
            if now - last >= PROGRESS_EVERY_S:
                last = now
                self._announce(document_id, progress)

        return report
