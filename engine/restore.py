"""Rebuild a vault in a new folder from an export archive or from one of a vault's backups.

Both sources go to a folder that holds no vault (a missing or empty folder): a restore never overwrites anything,
so the vault it came from, or one already in use, is never at risk.  The restored vault gets an id of its own (it is
a new vault that holds the same memories, and the desktop app tells vaults apart by their ids), and its vectors are
made by the embedder this machine has before the restore returns, unless the caller asks not to wait.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pluggy

from engine import paths
from engine.ai.embedders import Embedder
from engine.archive import Progress, archive_settings, load_archive, read_manifest
from engine.config import Settings
from engine.errors import Conflict, ValidationError
from engine.permissions import create_private_file, private_dir, private_file
from engine.vault import Vault


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What a restore made: the new vault, what it holds, and what is still to do."""

    vault: str
    source: str
    source_kind: str  # "archive" | "backup"
    counts: dict[str, int]
    originals: int = 0
    vectors_pending: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)


def source_kind(source: Path) -> str:
    """``archive`` (an export), ``backup`` (a vault database copy) — or a clear error.

    Raises:
        ValidationError: the file is missing or is neither.
    """
    if not source.is_file():
        raise ValidationError("file", f"{source} does not exist or is not a file", fix="Check the path.")
    if zipfile.is_zipfile(source):
        return "archive"  # read_manifest says what is wrong with a ZIP file that is no Cairn export
    with source.open("rb") as handle:
        if handle.read(16) == b"SQLite format 3\x00":
            return "backup"
    raise ValidationError(
        "file",
        f"{source} is neither a Cairn export nor a vault backup",
        fix="Choose a file written by `cairn export` or File → Export, or a backup from `cairn backups`.",
    )


def empty_target(target: str | Path) -> Path:
    """The folder to restore into, checked: missing or empty.

    Raises:
        Conflict: it holds a vault or other files (nothing is overwritten).
        ValidationError: it is a file.
    """
    root = paths.resolve_vault_dir(target)
    if root.exists() and not root.is_dir():
        raise ValidationError("vault", f"{root} is a file", fix="Name a new folder for the restored vault.")
    if root.is_dir() and any(root.iterdir()):
        what = "a vault" if (root / paths.DB_FILE).exists() else "other files"
        raise Conflict(
            f"{root} already holds {what}; a restore never overwrites anything.",
            fix="Name a new (or empty) folder for the restored vault.",
        )
    return root


def restore_vault(
    source: str | Path,
    target: str | Path,
    *,
    progress: Progress | None = None,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    plugins: pluggy.PluginManager | None = None,
    env: dict[str, str] | None = None,
    wait_for_vectors: float = 3600.0,
) -> RestoreReport:
    """Restore ``source`` (an export archive or a backup) into the new folder ``target``.

    ``settings``/``embedder``/``plugins``/``env`` are passed to :meth:`Vault.open` (tests; the app passes its
    plugins).  Without ``settings`` an archive's own settings are used (secrets were never in it).  The call
    returns once the vectors are made, or after ``wait_for_vectors`` seconds (0: at once) with the rest queued; the
    report says how many wait.  On any failure the folder is removed again if this call created it.

    Raises:
        ValidationError: the source is missing, damaged or not a Cairn file.
        Conflict: the target holds something.
        VaultTooNew: the source was written by a newer Cairn.
    """
    source_path = Path(source).expanduser().resolve()
    kind = source_kind(source_path)
    root = empty_target(target)
    if kind == "archive":
        read_manifest(source_path)  # refuse a damaged or newer archive before making anything
    created = not root.exists()
    vault_paths = paths.VaultPaths(root)
    try:
        private_dir(root)
        if kind == "backup":
            _copy_backup(source_path, vault_paths.db)
        elif settings is None:
            carried = archive_settings(source_path)
            if carried:
                Settings.from_dict(carried, origin="the archive's settings.json").save(vault_paths.settings)

        def opened(start_workers: bool = False) -> Vault:
            return Vault.open(
                root, settings=settings, embedder=embedder, plugins=plugins, env=env, start_workers=start_workers
            )

        originals = 0
        with opened() as vault:
            if kind == "backup":
                vault.store.write(lambda tx: tx.execute("DELETE FROM meta WHERE key = 'vault_id'"))
            else:
                loaded = load_archive(
                    vault.store, vault.paths.originals, source_path, space_id=vault.vectors.space_id, progress=progress
                )
                originals = loaded.originals
            vault.vault_id()  # a new id: this is a vault of its own
        pending = 0
        if kind == "archive":
            with opened(start_workers=True) as vault:
                pending = _make_vectors(vault, progress, wait_for_vectors)
        with opened() as vault:
            counts = asdict(vault.counts())
    except BaseException:
        if created:
            shutil.rmtree(root, ignore_errors=True)
        else:
            for item in root.iterdir():
                shutil.rmtree(item, ignore_errors=True) if item.is_dir() else item.unlink(missing_ok=True)
        raise
    notes = []
    if pending:
        notes.append(f"{pending} vectors are still being made; recall finds those items by their words meanwhile.")
    return RestoreReport(
        str(root),
        str(source_path),
        kind,
        {k: int(v) for k, v in counts.items()},
        originals,
        pending,
        tuple(notes),
    )


def _copy_backup(source: Path, db: Path) -> None:
    """Copy a backup into place with SQLite's online backup (a consistent copy even if someone writes to it)."""
    create_private_file(db)
    try:
        with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as src, sqlite3.connect(db) as dst:
            src.backup(dst)
    except sqlite3.DatabaseError as exc:
        raise ValidationError(
            "file", f"{source} is not a readable vault backup ({exc})", fix="Choose another backup."
        ) from exc
    private_file(db)


def _make_vectors(vault: Vault, progress: Progress | None, wait: float) -> int:
    """Let the restored vault's background work make the queued vectors; how many still wait after ``wait`` s."""
    total = _pending(vault)
    deadline = time.monotonic() + wait
    left = total
    while left and time.monotonic() < deadline:
        if progress is not None:
            progress("vectors", total - left, total)
        time.sleep(0.2)
        left = _pending(vault)
    if progress is not None and not left:
        progress("vectors", total, total)
    return left


def _pending(vault: Vault) -> int:
    status = vault.vector_status()
    return int(status.queued + status.remaining)
