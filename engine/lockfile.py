"""An advisory lock that makes one process the owner (and the only writer) of a vault.

Two processes writing one SQLite file would each believe they are the single writer; the lock turns that into a
clear :class:`~engine.errors.VaultLocked` error naming the other process.  The OS releases the lock when the
process dies, so a crash never leaves a vault locked.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

from engine.errors import VaultLocked
from engine.permissions import create_private_file


class VaultLock:
    """Holds an exclusive, non-blocking lock on ``<vault>/vault.lock`` until :meth:`release`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`VaultLocked`."""
        create_private_file(self.path)  # it names the holding process: owner only, like the rest of the vault
        fh = self.path.open("a+", encoding="utf-8")
        try:
            _lock(fh)
        except OSError as exc:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise VaultLocked(
                f"The vault {self.path.parent} is already open in another Cairn process ({holder}).",
                fix="Close the other Cairn window or `cairn serve`, or use the endpoint it serves.",
            ) from exc
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}")
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if self._fh is not None:
            try:
                _unlock(self._fh)
            finally:
                self._fh.close()
                self._fh = None


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock(fh: IO[str]) -> None:
        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)

    def _unlock(fh: IO[str]) -> None:
        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fh: IO[str]) -> None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fh: IO[str]) -> None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
