"""Where a path really leads, and whether that place is one Cairn may read files from.

A symlink makes a file in a watched folder stand for any file the process can read: ``notes.md →
~/.ssh/id_ed25519`` or ``environ.txt → /proc/self/environ`` would become a document that recall
hands to a model.  So every read of a watched file, and every upload of a path a client named, asks
this module first: the path is resolved with :func:`os.path.realpath` (strictly: a dangling link or
a link loop resolves to nothing, it never hangs), and the real path must lie inside one of the
allowed folders' own real paths and outside the system's pseudo-file systems
(:data:`~engine.config.SYSTEM_FOLDERS`), whatever folders were allowed.

This is a check of where a path leads *now*; :func:`open_resolved` then opens that very real path
without following a link at its last step, so a link swapped in between check and read is refused
rather than followed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from engine.config import SYSTEM_FOLDERS


def real_path(path: str | os.PathLike[str]) -> str | None:
    """Where ``path`` leads, every link resolved; None when it leads nowhere (missing, dangling, a loop)."""
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, RuntimeError):  # ELOOP, ENOENT, EACCES; RuntimeError on a loop in older Pythons
        return None


def is_inside(real: str, folder_real: str) -> bool:
    """Whether the real path ``real`` is ``folder_real`` or lies below it (both already resolved)."""
    top = folder_real.rstrip(os.sep) or os.sep
    return real == top or real.startswith(top if top == os.sep else top + os.sep)


def in_system_folder(real: str) -> bool:
    """Whether a resolved path lies in ``/proc``, ``/sys`` or ``/dev``."""
    return any(is_inside(real, top) for top in SYSTEM_FOLDERS)


def resolve_within(path: str | os.PathLike[str], folders: Iterable[str | os.PathLike[str]]) -> str | None:
    """The real path of ``path`` when it leads inside one of ``folders`` (each resolved in turn) and outside the
    system folders; None otherwise."""
    real = real_path(path)
    if real is None or in_system_folder(real):
        return None
    for folder in folders:
        folder_real = real_path(folder)
        if folder_real is not None and is_inside(real, folder_real):
            return real
    return None


def open_resolved(real: str) -> int:
    """A read-only file descriptor for an already resolved path, refusing a link at its last step (``O_NOFOLLOW``):
    what was checked is what is read.  ``O_NONBLOCK``: a named pipe swapped in meanwhile does not hang the open (the
    caller checks that it got a regular file).

    Raises:
        OSError: it cannot be opened (``ELOOP`` when it has become a link since it was resolved).
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    return os.open(Path(real), flags)
