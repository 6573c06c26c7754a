"""The vault is readable by its owner only: folders 0700, files 0600, on new vaults and tightened on existing ones.

The door (the endpoint's token) is useless if the wall is open: under the usual umask (022) every file Cairn and
SQLite create would be readable by every local account.  So the vault folder and every folder in it are created
0700, every file 0600, and :func:`tighten` brings an existing vault (or one a restore or a copy loosened) back to
that at each open; ``cairn doctor`` reports what it had to tighten.  SQLite creates the WAL and shared-memory files
with the database file's own mode, so a 0600 ``vault.db`` keeps them private too.

Symlinks are never followed or changed: a link inside the vault is not the vault's to tighten.  On systems without
POSIX modes (Windows) these are no-ops; the per-user profile folder already keeps others out there.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
POSIX = os.name == "posix"


@dataclass(frozen=True, slots=True)
class Loosened:
    """A path that others could read or enter, with the mode it had."""

    path: Path
    mode: int


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) as 0700 if needed, and make it 0700; returns it."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    if POSIX and stat.S_IMODE(path.stat().st_mode) != DIR_MODE:
        os.chmod(path, DIR_MODE)
    return path


def private_file(path: Path) -> None:
    """Make an existing file 0600 (a missing one is fine: nothing to protect)."""
    if not POSIX:
        return
    with contextlib.suppress(FileNotFoundError):
        if stat.S_IMODE(path.lstat().st_mode) != FILE_MODE and not path.is_symlink():
            os.chmod(path, FILE_MODE)


def create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 unless it exists (so a file written into it later is never readable by
    others, not even for a moment)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE))


def loosened(root: Path) -> list[Loosened]:
    """Every folder and file under ``root`` (itself included) that group or others may read, write or enter."""
    if not POSIX or not root.is_dir():
        return []
    found: list[Loosened] = []
    for path in _walk(root):
        try:
            mode = stat.S_IMODE(path.lstat().st_mode)
        except FileNotFoundError:  # a temporary file that came and went while the folder was read
            continue
        if mode & 0o077:
            found.append(Loosened(path, mode))
    return found


def tighten(root: Path) -> list[Loosened]:
    """Make ``root`` and every folder in it 0700 and every file 0600; returns what was looser (and is no more).

    Paths that vanish meanwhile, or that belong to someone else (chmod refused), are left as they are.
    """
    changed: list[Loosened] = []
    for item in loosened(root):
        wanted = DIR_MODE if item.path.is_dir() else FILE_MODE
        try:
            os.chmod(item.path, wanted)
        except (FileNotFoundError, PermissionError) as exc:
            log.warning("could not make %s private: %s", item.path, exc)
            continue
        changed.append(item)
    files = [item for item in changed if not item.path.is_dir()]
    if files:  # content others could read: worth a warning
        log.warning(
            "made %s paths in the vault folder private (owner only), %s of them files", len(changed), len(files)
        )
    elif changed:  # only folders (often the vault folder a person made with mkdir): they showed names, not content
        log.info("made %s folders of the vault private (owner only)", len(changed))
    return changed


def _walk(root: Path) -> list[Path]:
    """``root`` and everything under it, without following symlinks (links themselves are skipped)."""
    out = [root]
    for folder, dirs, files in os.walk(root, followlinks=False):
        base = Path(folder)
        for name in dirs + files:
            path = base / name
            if not path.is_symlink():  # False for a path that is gone meanwhile: loosened() skips those too
                out.append(path)
    return out
