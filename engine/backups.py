"""Online backups into ``<vault>/backups/``: ``VACUUM INTO`` a consistent copy, keep the newest N generations.

Never a file copy of the open database (that can tear a page mid-write); ``VACUUM INTO`` runs on the writer thread
between transactions, so the copy is one consistent snapshot.  Forgetting deletes older backups (they would bring
forgotten data back), so the next scheduled backup starts a fresh generation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.errors import StorageFull
from engine.permissions import create_private_file, private_dir, private_file
from engine.store import Store
from engine.temporal import from_epoch

PREFIX = "vault-"


@dataclass(frozen=True, slots=True)
class Backup:
    """One backup file."""

    path: str
    size_bytes: int
    created_at: datetime


def list_backups(folder: Path) -> list[Backup]:
    """Scheduled/manual backups, newest first (migration safety copies are listed too)."""
    if not folder.exists():
        return []
    files = [p for p in folder.iterdir() if p.is_file() and p.suffix == ".db"]
    return sorted(
        (Backup(str(p), p.stat().st_size, from_epoch(p.stat().st_mtime)) for p in files),
        key=lambda b: b.created_at,
        reverse=True,
    )


def make_backup(store: Store, folder: Path, generations: int) -> Backup:
    """Write a new backup and delete scheduled ones beyond ``generations``.

    Raises:
        StorageFull: the disk is full (the partial file is removed).
    """
    assert store.writer is not None
    private_dir(folder)
    target = folder / f"{PREFIX}{time.strftime('%Y%m%d-%H%M%S')}.db"
    n = 1
    while target.exists():
        target = folder / f"{PREFIX}{time.strftime('%Y%m%d-%H%M%S')}-{n}.db"
        n += 1

    def vacuum(driver: Any) -> None:
        driver.execute("VACUUM INTO ?", (str(target),))

    create_private_file(target)  # VACUUM INTO writes into an empty file, keeping its mode
    try:
        store.writer.run_outside_transaction(vacuum, timeout=3600)
    except StorageFull:
        target.unlink(missing_ok=True)
        raise
    private_file(target)
    scheduled = sorted((p for p in folder.glob(f"{PREFIX}*.db")), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in scheduled[max(1, generations) :]:
        old.unlink(missing_ok=True)
    return Backup(str(target), target.stat().st_size, from_epoch(target.stat().st_mtime))


def backup_due(folder: Path, interval_hours: float) -> bool:
    """True when the newest scheduled backup is older than the interval (or there is none)."""
    newest = max((p.stat().st_mtime for p in folder.glob(f"{PREFIX}*.db")), default=0.0) if folder.exists() else 0.0
    return time.time() - newest >= interval_hours * 3600


class BackupsApi:
    """``vault.backups``: ``vault.backups()`` lists them, as ``vault.facts()`` lists facts; :meth:`now` writes one."""

    def __init__(self, store: Store, folder: Path, generations: Callable[[], int], emit: Callable[..., Any]) -> None:
        self._store = store
        self._folder = folder
        self._generations = generations  # read at each backup: a changed setting applies to the next one
        self._emit = emit

    def __call__(self) -> list[Backup]:
        """Backups in the vault's ``backups/`` folder, newest first."""
        return list_backups(self._folder)

    def now(self) -> Backup:
        """Write an online backup now (keeps ``backups.generations`` of them) and announce it."""
        backup = make_backup(self._store, self._folder, max(1, self._generations()))
        self._emit("backup.created", None, path=backup.path)
        return backup
