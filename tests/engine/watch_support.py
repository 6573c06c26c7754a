"""Test support for the folder watcher: a real in-memory sink, the folder's own index, editor saves.

``MemorySink`` is a complete, minimal implementation of :class:`engine.watching.FolderSink`: it reads
each file it is asked to ingest, keys its index by path, and records every call — so a test can
compare what the vault would hold against what the folder really holds (``folder_index``), which is
computed independently of the watcher's own scope code.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from engine.watching import FileState

DOC_SUFFIXES = (".md", ".markdown", ".txt", ".pdf", ".html", ".htm")
EXCLUDED_PARTS = ("node_modules", "__pycache__")


def sha(data: bytes) -> str:
    """Hex SHA-256, as the watcher and the document service use it."""
    return hashlib.sha256(data).hexdigest()


class MemorySink:
    """The document service reduced to a dict: path → state, filled from the file's actual bytes."""

    def __init__(self, *, fail_on: Iterable[str] = (), index_failures: int = 0) -> None:
        self.states: dict[Path, FileState] = {}
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.ingested: list[tuple[Path, str]] = []  # every ingest call: path and the hash it read
        self.removed: list[Path] = []
        self.stale_hashes: list[Path] = []  # the watcher claimed a hash the file did not have
        self.threads: set[int] = set()
        self.fail_on = set(fail_on)  # file names whose ingest raises
        self.index_failures = index_failures  # how many indexed_files calls raise first
        self._lock = threading.Lock()

    # -- the FolderSink protocol ---------------------------------------------------------------

    def indexed_files(self, root: Path) -> dict[Path, FileState]:
        self._enter()
        if self.index_failures:
            self.index_failures -= 1
            raise OSError("the vault is busy")
        with self._lock:
            return {p: s for p, s in self.states.items() if p.is_relative_to(root)}

    def ingest_file(self, path: Path, root: Path, state: FileState) -> str:
        self._enter()
        if path.name in self.fail_on:
            raise OSError(f"cannot parse {path.name}")
        data = path.read_bytes()
        digest = sha(data)
        with self._lock:
            if state.content_hash != digest:
                self.stale_hashes.append(path)
            self.ingested.append((path, digest))
            previous = self.states.get(path)
            self.states[path] = FileState(state.size, state.mtime_ns, digest)
        if previous is not None and previous.content_hash == digest:
            return "unchanged"
        return "ok"

    def remove_file(self, path: Path, root: Path) -> None:
        self._enter()
        with self._lock:
            self.states.pop(path, None)
            self.removed.append(path)

    def report(self, event: str, data: Mapping[str, object]) -> None:
        self._enter()
        with self._lock:
            self.events.append((event, dict(data)))

    # -- what tests look at ----------------------------------------------------------------------

    @property
    def index(self) -> dict[Path, str]:
        with self._lock:
            return {p: s.content_hash or "" for p, s in self.states.items()}

    def events_named(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [data for event, data in self.events if event == name]

    def ingest_counts(self) -> Counter[Path]:
        with self._lock:
            return Counter(path for path, _ in self.ingested)

    def _enter(self) -> None:
        self.threads.add(threading.get_ident())


def in_default_scope(relative: Path) -> bool:
    """The default globs spelled out independently: document suffixes, no hidden or tool parts."""
    parts = relative.parts
    if any(p.startswith(".") or p in EXCLUDED_PARTS for p in parts):
        return False
    name = parts[-1]
    if name.endswith(("~", ".swp", ".tmp")):
        return False
    return name.lower().endswith(DOC_SUFFIXES)


def folder_index(
    root: Path, keep: Callable[[Path], bool] = in_default_scope, *, follow_links: bool = False
) -> dict[Path, str]:
    """What the folder holds: in-scope path → hash of its bytes (symlinks not followed)."""
    found: dict[Path, str] = {}
    for directory, _dirs, files in os.walk(root, followlinks=follow_links):
        for name in files:
            path = Path(directory) / name
            if path.is_file() and keep(path.relative_to(root)):
                found[path] = sha(path.read_bytes())
    return found


def wait_until(
    condition: Callable[[], bool],
    timeout: float,
    interval: float = 0.05,
    describe: Callable[[], str] | None = None,
) -> float:
    """Poll ``condition`` until true; return the seconds it took.  Fails the test on timeout."""
    start = time.monotonic()
    while True:
        if condition():
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            detail = f": {describe()}" if describe is not None else ""
            raise AssertionError(f"condition not met within {timeout} s{detail}")
        time.sleep(interval)


def index_diff(sink: MemorySink, root: Path) -> str:
    """How the sink's index differs from the folder, for failure messages."""
    folder, index = folder_index(root), sink.index
    missing = sorted(str(p) for p in folder.keys() - index.keys())
    extra = sorted(str(p) for p in index.keys() - folder.keys())
    stale = sorted(str(p) for p in folder.keys() & index.keys() if folder[p] != index[p])
    events = [e for e in sink.events if e[0] != "ingest.progress"][-6:]
    return (
        f"{len(missing)} missing {missing[:3]}, {len(extra)} extra {extra[:3]}, "
        f"{len(stale)} stale {stale[:3]}; last events {events}"
    )


def hold_for(condition: Callable[[], bool], seconds: float, interval: float = 0.05) -> None:
    """Assert that ``condition`` stays true for ``seconds`` (nothing happens that should not)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert condition()
        time.sleep(interval)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def vim_style_save(path: Path, text: str) -> None:
    """vim with ``backupcopy=no``: probe file 4913, rename the original to ``file~``, write anew."""
    probe = path.parent / "4913"
    probe.write_bytes(b"")
    probe.unlink()
    backup = path.with_name(path.name + "~")
    os.rename(path, backup)
    with path.open("w", encoding="utf-8") as handle:
        handle.write(text[: len(text) // 2])
        handle.flush()
        handle.write(text[len(text) // 2 :])
    backup.unlink()


def gedit_style_save(path: Path, text: str, suffix: str = "A1B2C3") -> None:
    """gedit (GIO): write a hidden ``.goutputstream-XXXXXX``, then rename it over the target."""
    temp = path.parent / f".goutputstream-{suffix}"
    temp.write_text(text, encoding="utf-8")
    os.rename(temp, path)
