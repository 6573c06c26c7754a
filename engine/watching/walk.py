"""The reconciliation walk: every in-scope file of a folder with size and mtime; loop-safe.

Two passes keep paths stable and loops finite.  The first walks the real tree without following
symlinks, so a directory reachable both directly and through a link is always indexed under its
real path.  The second follows symlinked directories, skipping any whose (st_dev, st_ino) was
already visited, and never one that is an ancestor of the folder (that would re-enter the folder
and then its parents).  Directories that cannot be listed are reported, so the caller does not
mistake their files for deleted ones.

A link is followed only when it leads inside the folder itself (by real path, see
:mod:`engine.watching.containment`) and outside ``/proc``, ``/sys`` and ``/dev``: a link out of the
folder — to a private key, another folder, the process's environment — is neither a file nor a
folder of it, and is reported as not followed.  A dangling link or a link loop resolves to nothing
and is passed over.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine.watching.containment import in_system_folder, is_inside, real_path
from engine.watching.contract import FileState
from engine.watching.scope import FolderScope

# Deeper than any real document tree; stops a pathological source (a FUSE mount inventing levels).
MAX_DEPTH = 96


@dataclass(frozen=True, slots=True)
class FileSig:
    """A file's identity for stability checks: size, mtime and the inode (atomic saves swap it)."""

    size: int
    mtime_ns: int
    ino: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileSig:
        """The signature of a stat result."""
        return cls(st.st_size, st.st_mtime_ns, st.st_ino)

    def state(self, content_hash: str | None = None) -> FileState:
        """The sink-facing state for this signature."""
        return FileState(self.size, self.mtime_ns, content_hash)


@dataclass(slots=True)
class WalkResult:
    """What one walk found."""

    files: dict[Path, FileSig] = field(default_factory=dict)
    unreadable: list[Path] = field(default_factory=list)
    # logical path of each symlinked directory followed → the real directory behind it
    links: dict[Path, Path] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    dirs: int = 0
    aborted: bool = False


def stat_sig(path: Path) -> FileSig | None:
    """The signature of a regular file (links followed); None when missing or not a file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return FileSig.of(st) if stat.S_ISREG(st.st_mode) else None


def walk_folder(root: Path, scope: FolderScope, *, should_stop: Callable[[], bool] = lambda: False) -> WalkResult:
    """Walk ``root``; in-scope files are keyed by logical path (under ``root``, links unresolved).

    Raises:
        OSError: ``root`` itself cannot be stat'ed (missing, unmounted, permission denied).
    """
    return _Walker(root, scope, should_stop).run()


@dataclass(slots=True)
class _LinkedDir:
    logical: Path
    relative: str  # POSIX path relative to the folder
    depth: int


class _Walker:
    def __init__(self, root: Path, scope: FolderScope, should_stop: Callable[[], bool]) -> None:
        self.root = root
        self.scope = scope
        self.should_stop = should_stop
        self.result = WalkResult()
        self.root_real = os.path.realpath(root)
        self.visited: set[tuple[int, int]] = set()
        self.linked_dirs: list[_LinkedDir] = []
        self.linked_files: list[tuple[Path, os.stat_result]] = []
        self.seen_files: set[tuple[int, int]] = set()

    def run(self) -> WalkResult:
        st = os.stat(self.root)
        self.visited.add((st.st_dev, st.st_ino))
        self._walk_tree(self.root, "", 0)
        self._follow_links()
        for path, st in sorted(self.linked_files, key=lambda item: str(item[0])):
            key = (st.st_dev, st.st_ino)
            if key not in self.seen_files:  # a link to a file already indexed under its own name
                self.seen_files.add(key)
                self.result.files[path] = FileSig.of(st)
        return self.result

    def _follow_links(self) -> None:
        while self.linked_dirs and not self.result.aborted:
            # Shallow and alphabetical first: the same link wins every scan; paths stay stable.
            self.linked_dirs.sort(key=lambda d: (d.depth, d.relative))
            linked = self.linked_dirs.pop(0)
            try:
                st = os.stat(linked.logical)
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            real = os.path.realpath(linked.logical)
            if key in self.visited or self.root_real.startswith(real.rstrip(os.sep) + os.sep):
                continue
            self.visited.add(key)
            self.result.links[linked.logical] = Path(real)
            self._walk_tree(linked.logical, linked.relative, linked.depth)

    def _walk_tree(self, top: Path, top_relative: str, top_depth: int) -> None:
        stack = [(top, top_relative, top_depth)]
        while stack:
            if self.should_stop():
                self.result.aborted = True
                return
            directory, relative, depth = stack.pop()
            try:
                with os.scandir(directory) as it:
                    entries = list(it)
            except FileNotFoundError:
                continue  # removed while we walked: its files are gone indeed
            except OSError as exc:
                self._unreadable(directory, exc)
                continue
            self.result.dirs += 1
            for entry in entries:
                child = f"{relative}/{entry.name}" if relative else entry.name
                try:
                    subdir = self._visit(entry, child, depth)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    self._unreadable(Path(entry.path), exc)
                    continue
                if subdir is not None:
                    stack.append((Path(entry.path), child, depth + 1))

    def _unreadable(self, path: Path, exc: OSError) -> None:
        # what cannot be read is unknown, not deleted: the caller keeps its files
        self.result.unreadable.append(path)
        self.result.errors.append(f"{path}: {exc.strerror or exc}")

    def _visit(self, entry: os.DirEntry[str], relative: str, depth: int) -> Path | None:
        """Record a file or link; return the path of a real directory to descend into."""
        if entry.is_symlink():
            real = real_path(entry.path)
            if real is None:
                return None  # dangling link, or a loop of links
            try:
                target = os.stat(real)
            except OSError:
                return None  # gone since it was resolved
            if in_system_folder(real) or not is_inside(real, self.root_real):
                in_scope = (
                    not self.scope.excludes_dir(relative)
                    if stat.S_ISDIR(target.st_mode)
                    else self.scope.includes_file(relative)
                )
                if in_scope:  # say so: the person may wonder why the file is not in the vault
                    self.result.errors.append(f"{entry.path}: a link out of the watched folder, not followed")
                return None
            if stat.S_ISDIR(target.st_mode):
                if not self.scope.excludes_dir(relative):
                    self.linked_dirs.append(_LinkedDir(Path(entry.path), relative, depth + 1))
            elif stat.S_ISREG(target.st_mode) and self.scope.includes_file(relative):
                self.linked_files.append((Path(entry.path), target))
            return None
        if entry.is_dir(follow_symlinks=False):
            if self.scope.excludes_dir(relative):
                return None
            st = entry.stat(follow_symlinks=False)
            key = (st.st_dev, st.st_ino)
            if key in self.visited:  # a bind mount of an ancestor loops just like a symlink
                return None
            if depth + 1 > MAX_DEPTH:
                self.result.errors.append(f"{entry.path}: deeper than {MAX_DEPTH} levels")
                return None
            self.visited.add(key)
            return Path(entry.path)
        if entry.is_file(follow_symlinks=False) and self.scope.includes_file(relative):
            st = entry.stat(follow_symlinks=False)
            self.seen_files.add((st.st_dev, st.st_ino))
            self.result.files[Path(entry.path)] = FileSig.of(st)
        return None
