"""File-system events as hints: recorded on the observer thread, drained by the worker.

watchdog calls handlers on its own thread, so nothing here touches the sink or the disk: a handler
maps the event path back to the folder's logical path (a watch on a symlink target reports real
paths), drops what is out of scope, and records the path.  Directory-level events (a tree created,
deleted or moved) become a request for a folder scan, because one event stands for an unknown
number of files.

Storms collapse here already: once a folder has more distinct pending paths, or more raw events per
second, than the thresholds, its path set is dropped and a folder scan is requested instead.  The
raw-event threshold is also how queue overflows are noticed: watchdog 7 swallows the kernel's
overflow event, but an overflow can only happen after the kernel queue (16384 events by default)
filled up, and those events reach us before it — a burst far above the threshold.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
    FileSystemMovedEvent,
)

from engine.watching.scope import FolderScope

log = logging.getLogger(__name__)

# Opened, closed-without-write and directory "modified" events are noise here: not even requested.
WATCHED_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


@dataclass(slots=True)
class RootHints:
    """What arrived for one folder since the last drain."""

    paths: set[Path] = field(default_factory=set)
    scan_reason: str | None = None
    events: int = 0
    window_start: float = 0.0
    window_events: int = 0


class HintBuffer:
    """Thread-safe hint store: observer threads record, the worker drains."""

    def __init__(
        self,
        clock: Callable[[], float],
        wake: Callable[[], None],
        *,
        storm_paths: int,
        storm_events: int,
    ) -> None:
        self._clock = clock
        self._wake = wake
        self._storm_paths = storm_paths
        self._storm_events = storm_events
        self._lock = threading.Lock()
        self._roots: dict[Path, RootHints] = {}

    def record_path(self, root: Path, path: Path) -> None:
        """A file in scope may have changed, appeared or disappeared."""
        with self._lock:
            hints = self._count(root)
            if hints.scan_reason is None:
                hints.paths.add(path)
                if len(hints.paths) > self._storm_paths:
                    self._collapse(hints, "storm")
        self._wake()

    def record_tree(self, root: Path) -> None:
        """A directory appeared, disappeared or moved: only a folder scan knows what that means."""
        with self._lock:
            hints = self._count(root)
            if hints.scan_reason is None:
                self._collapse(hints, "tree")
        self._wake()

    def record_noise(self, root: Path) -> None:
        """An event we ignore still counts toward the burst that betrays a queue overflow."""
        with self._lock:
            storm = self._count(root).scan_reason == "storm"
        if storm:
            self._wake()

    def drain(self) -> dict[Path, RootHints]:
        """Take everything recorded so far; burst windows carry over so storms span drains."""
        with self._lock:
            drained = {root: hints for root, hints in self._roots.items() if hints.events or hints.scan_reason}
            for root, hints in drained.items():
                self._roots[root] = RootHints(window_start=hints.window_start, window_events=hints.window_events)
        return drained

    def forget(self, root: Path) -> None:
        """Drop everything recorded for a folder that is no longer watched."""
        with self._lock:
            self._roots.pop(root, None)

    def _count(self, root: Path) -> RootHints:
        hints = self._roots.setdefault(root, RootHints())
        now = self._clock()
        hints.events += 1
        if now - hints.window_start > 1.0:
            hints.window_start, hints.window_events = now, 0
        hints.window_events += 1
        if hints.window_events > self._storm_events and hints.scan_reason != "storm":
            self._collapse(hints, "storm")
        return hints

    @staticmethod
    def _collapse(hints: RootHints, reason: str) -> None:
        hints.paths.clear()
        if hints.scan_reason is None or reason == "storm":
            hints.scan_reason = reason


class FolderEventHandler(FileSystemEventHandler):
    """Translates one watchdog watch's events into hints for a watched folder.

    ``real_prefix`` is the directory the watch was placed on (a resolved path), ``logical_prefix``
    the path under the folder it stands for — the folder itself, or a symlink inside it.
    """

    def __init__(
        self,
        hints: HintBuffer,
        root: Path,
        scope: FolderScope,
        real_prefix: str,
        logical_prefix: Path,
    ) -> None:
        super().__init__()
        self._hints = hints
        self._root = root
        self._scope = scope
        self._real_prefix = real_prefix.rstrip(os.sep) or os.sep
        self._logical_prefix = logical_prefix

    def on_any_event(self, event: FileSystemEvent) -> None:
        """Record the hint.  Never raises: an exception would end the observer's thread."""
        try:
            self._record(event)
        except Exception:
            log.exception("could not interpret %r; asking for a folder scan", event)
            self._hints.record_tree(self._root)

    def _record(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            if event.event_type in ("created", "deleted", "moved"):
                self._hints.record_tree(self._root)
            else:
                self._hints.record_noise(self._root)
            return
        ends = [event.src_path]
        if isinstance(event, FileSystemMovedEvent) and event.dest_path:
            # a move is a removal at one end and a creation at the other
            ends.append(event.dest_path)
        recorded = False
        for end in ends:
            logical = self._logical(os.fsdecode(end))
            if logical is not None and self._scope.contains(logical.relative_to(self._root)):
                self._hints.record_path(self._root, logical)
                recorded = True
        if not recorded:
            self._hints.record_noise(self._root)

    def _logical(self, real: str) -> Path | None:
        if real == self._real_prefix:
            return self._logical_prefix
        prefix = self._real_prefix.rstrip(os.sep) + os.sep
        if not real.startswith(prefix):
            return None
        return self._logical_prefix / real[len(prefix) :]
