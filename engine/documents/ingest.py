"""Ingesting files and folders by hand (``cairn ingest``, drag and drop): a generator of progress.

Each yielded :class:`IngestProgress` says how far the run is (files done / total, the current file) and what
happened so far; the same progress goes to the change feed as ``ingest.progress`` (throttled) so the GUI and SSE
clients can follow a run started elsewhere.  A file that fails never stops the run: it is counted and named.
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.config import WatchedFolder
from engine.documents.model import UploadResult
from engine.documents.service import DocumentsApi
from engine.errors import UnsupportedFile, VaultError
from engine.watching.containment import resolve_within

#: The same default include/exclude globs as a watched folder.
DEFAULTS = WatchedFolder(path="/")
#: Uploads in flight during a run: one parsing while the one before it embeds and writes.
PIPELINE_DEPTH = 2


@dataclass(frozen=True, slots=True)
class IngestProgress:
    """Progress and outcome counts of one ingest run."""

    done: int
    total: int
    current: str
    ok: int = 0
    degraded: int = 0
    quarantined: int = 0
    unchanged: int = 0
    skipped: int = 0
    failed: int = 0
    problems: tuple[str, ...] = field(default_factory=tuple)
    document_ids: tuple[int, ...] = field(default_factory=tuple)

    @property
    def finished(self) -> bool:
        """True for the last progress of a run."""
        return self.done >= self.total


def collect(
    paths: Iterable[str | Path], *, include: Iterable[str] = DEFAULTS.include, exclude: Iterable[str] = DEFAULTS.exclude
) -> list[Path]:
    """The files to ingest: files as given, folders walked (include/exclude globs), each once, sorted.

    In a walked folder, a link is taken only when it leads to a file inside that folder, as in a watched folder:
    dropping a folder of notes must not bring along the private key one of its links points at.  A file named on
    its own is the person's explicit choice and is taken wherever it is (the upload still refuses system folders).
    """
    include, exclude = tuple(include), tuple(exclude)
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            found[path.resolve()] = None
        elif path.is_dir():
            for folder, dirs, files in os.walk(path, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, pat) for pat in exclude))
                for name in sorted(files):
                    if any(fnmatch.fnmatch(name, pat) for pat in exclude):
                        continue
                    if include and not any(fnmatch.fnmatch(name.casefold(), pat.casefold()) for pat in include):
                        continue
                    real = resolve_within(Path(folder) / name, (path,))
                    if real is not None:
                        found[Path(real)] = None
    return sorted(found)


def ingest(
    documents: DocumentsApi,
    files: list[Path],
    emit: Callable[..., Any],
    *,
    user_id: str = "default",
    collection_id: int | None = None,
    project_id: str | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> Iterator[IngestProgress]:
    """Upload ``files``, yielding progress after each in the order given (and once before the first).

    Two uploads are in flight at a time: while one file's spans are embedded and written, the next one is parsed
    in the sandbox process.  Parsing, embedding (native code) and the writer thread release the GIL, so the
    stages overlap and a run goes at the pace of its slowest stage rather than the sum of all three.  The
    sandbox still parses one file at a time, and each upload is its own transaction, so nothing else changes.
    """
    progress = IngestProgress(0, len(files), "")
    yield progress
    last_emit = 0.0

    def upload(path: Path) -> UploadResult:
        return documents.upload(
            path=path, user_id=user_id, collection_id=collection_id, project_id=project_id, source="ingest"
        )

    with ThreadPoolExecutor(max_workers=PIPELINE_DEPTH, thread_name_prefix="cairn-ingest") as pool:
        pending: deque[tuple[Path, Future[UploadResult]]] = deque()
        queue = iter(files)
        stopped = False
        for index in range(1, len(files) + 1):
            while not stopped and len(pending) < PIPELINE_DEPTH:
                nxt = next(queue, None)
                if nxt is None:
                    break
                if should_stop():
                    stopped = True
                    break
                pending.append((nxt, pool.submit(upload, nxt)))
            if not pending:
                break
            path, future = pending.popleft()
            counts: dict[str, Any] = {}
            try:
                result = future.result()
            except UnsupportedFile:
                counts["skipped"] = progress.skipped + 1
            except VaultError as exc:
                counts["failed"] = progress.failed + 1
                counts["problems"] = (*progress.problems, f"{path.name}: {exc.message}")
            else:
                key = {"processing": "ok", "ready": "ok"}.get(result.status, result.status)
                counts[key] = getattr(progress, key) + 1
                if result.status == "quarantined":
                    counts["problems"] = (*progress.problems, f"{path.name}: quarantined ({result.reason})")
                if result.document_id is not None:
                    counts["document_ids"] = (*progress.document_ids, result.document_id)
            progress = replace(progress, done=index, current=str(path), **counts)
            now = time.monotonic()
            if now - last_emit > 0.2 or index == len(files):
                last_emit = now
                emit("ingest.progress", None, done=index, total=len(files), current=path.name)
            yield progress
