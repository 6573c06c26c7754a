"""The endpoint's bearer token: a random secret in ``<vault>/token``, readable by the owner only (0600)."""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path

TOKEN_BYTES = 32
#: Threads of one process asking for the token at once (the GUI's views and the endpoint at start) must not race
#: over the temporary file; other processes are kept apart by the file names (pid and a random part).
_LOCK = threading.Lock()


def read_or_create_token(path: Path) -> str:
    """Return the token in ``path``, creating it (mode 0600) on first use.

    The file is created with ``O_EXCL`` and mode 0600 from the start, so the secret is never world-readable, not
    even for a moment.  A token file with looser permissions is tightened.
    """
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        token = ""
    if token:
        _tighten(path)
        return token
    with _LOCK:
        return _write_new(path)


def rotate_token(path: Path) -> str:
    """Replace the token with a new random one and return it; old tokens stop working at once."""
    with _LOCK:
        return _write_new(path, replace=True)


def _write_new(path: Path, *, replace: bool = False) -> str:
    token = secrets.token_urlsafe(TOKEN_BYTES)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, token.encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    if not replace and path.exists() and path.read_text(encoding="utf-8").strip():
        tmp.unlink()  # another process created it meanwhile: theirs wins
        return path.read_text(encoding="utf-8").strip()
    os.replace(tmp, path)
    return token


def _tighten(path: Path) -> None:
    if os.name != "nt" and (path.stat().st_mode & 0o077):
        os.chmod(path, 0o600)
