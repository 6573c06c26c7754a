"""Where Cairn keeps things on disk: the data folder, the default vault and the models folder.

Resolution order, most specific first: an explicit argument (``--vault``), the ``CAIRN_HOME`` environment variable,
then the platform's user-data folder from platformdirs.  Nothing here creates folders at import time; callers ask
for a path and create it when they write.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "Cairn"

DB_FILE = "vault.db"
TOKEN_FILE = "token"
SETTINGS_FILE = "settings.toml"
LOCK_FILE = "vault.lock"
LOGS_DIR = "logs"
BACKUPS_DIR = "backups"
CHROMA_DIR = "chroma"
ORIGINALS_DIR = "originals"
WORK_DIR = "work"
UPLOADS_DIR = "uploads"


def data_dir() -> Path:
    """Cairn's data folder: ``$CAIRN_HOME`` or the platform's user-data folder."""
    home = os.environ.get("CAIRN_HOME")
    if home:
        return Path(home).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_vault_dir() -> Path:
    """The vault used when none is named: ``<data dir>/vault``."""
    return data_dir() / "vault"


def models_dir() -> Path:
    """Folder for local model files (ONNX embedders): ``$CAIRN_MODELS_DIR`` or ``<data dir>/models``.

    Models are shared by every vault of the user, so they live beside vaults rather than inside one.
    """
    override = os.environ.get("CAIRN_MODELS_DIR")
    if override:
        return Path(override).expanduser()
    return data_dir() / "models"


def resolve_vault_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The vault folder to use: ``explicit`` if given, else the default."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    return default_vault_dir().resolve()


@dataclass(frozen=True, slots=True)
class VaultPaths:
    """The files of one vault folder (DESIGN §2)."""

    root: Path

    @property
    def db(self) -> Path:
        """The SQLite database."""
        return self.root / DB_FILE

    @property
    def token(self) -> Path:
        """The endpoint's bearer token (mode 0600)."""
        return self.root / TOKEN_FILE

    @property
    def settings(self) -> Path:
        """User settings (TOML)."""
        return self.root / SETTINGS_FILE

    @property
    def lock(self) -> Path:
        """Advisory lock held by the process that owns the vault."""
        return self.root / LOCK_FILE

    @property
    def logs(self) -> Path:
        """Rotating logs (never memory content or the token)."""
        return self.root / LOGS_DIR

    @property
    def backups(self) -> Path:
        """Online backups."""
        return self.root / BACKUPS_DIR

    @property
    def uploads(self) -> Path:
        """Uploads waiting to be read in the background (their bytes until their tree is stored): kept across a
        restart, unlike :attr:`work`, so that an answered upload is never lost."""
        return self.root / UPLOADS_DIR

    @property
    def work(self) -> Path:
        """Temporary work (files handed to the parser sandbox): private to the vault, emptied at each open, so a
        killed process leaves nothing outside the vault that forget could not reach."""
        return self.root / WORK_DIR

    @property
    def originals(self) -> Path:
        """Original files that came with a restored vault, one folder per document
        (:mod:`engine.documents.originals`)."""
        return self.root / ORIGINALS_DIR

    @property
    def chroma(self) -> Path:
        """Embedded Chroma data, when that vector backend is chosen."""
        return self.root / CHROMA_DIR
