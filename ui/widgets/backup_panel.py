"""The backups of the vault on the Settings page: the last one, the generations kept, "Back up now".

The engine writes an online backup (``VACUUM INTO``) into the vault's ``backups/`` folder every
``backups.interval_hours`` and keeps ``backups.generations`` of them; ``vault.backups.now`` writes one
at once.  The panel lists what is in the folder (copies made before a schema upgrade too, which the
generations do not count) and refreshes when a backup is made, the settings change or a forget
removes older backups.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from engine import Vault
from engine.backups import PREFIX, Backup
from engine.changes import Change
from engine.config import BackupSettings
from ui.format import local_time, plural
from ui.models.rows import Column, RowTableModel
from ui.ops import OpRunner
from ui.widgets.document_pane import size_text
from ui.widgets.labels import secondary_label, value_label
from ui.widgets.tables import EmptyAware, simple_table

TABLE_ROWS = 5


def backup_kind(backup: Backup) -> str:
    """The kind of a backup: one of the generations kept, or a safety copy made before a schema upgrade."""
    return "scheduled or by hand" if Path(backup.path).name.startswith(PREFIX) else "before an upgrade"


BACKUP_COLUMNS: tuple[Column[Backup], ...] = (
    Column("Made", lambda b: local_time(b.created_at)),
    Column("Size", lambda b: size_text(b.size_bytes), align_right=True),
    Column("Kind", backup_kind),
    Column("File", lambda b: Path(b.path).name, lambda b: b.path),
)


@dataclass(frozen=True, slots=True)
class BackupState:
    """The backups in the folder (newest first) and the settings that schedule them."""

    backups: tuple[Backup, ...]
    settings: BackupSettings


def load_backups(vault: Vault) -> BackupState:
    """What the panel shows (reader pool)."""
    return BackupState(tuple(vault.backups()), vault.settings.backups)


def describe_backups(state: BackupState) -> tuple[str, str]:
    """Two lines: the last backup, then the generations kept and when the next one is due."""
    kept = [b for b in state.backups if backup_kind(b) == "scheduled or by hand"]
    last = kept[0] if kept else None
    first = (
        f"Last backup: {local_time(last.created_at)} ({size_text(last.size_bytes)})."
        if last is not None
        else "No backup yet."
    )
    generations = state.settings.generations
    if generations == 0:
        return first, "Automatic backups are off (0 generations kept); Back up now still makes one."
    if last is not None:
        next_at = last.created_at + timedelta(hours=state.settings.interval_hours)
        due = f" The next automatic one is due {local_time(next_at)}."
    else:
        due = " The first automatic one is made within ten minutes of starting."
    return first, f"{len(kept)} of {plural(generations, 'generation')} kept.{due}"


class BackupPanel(QGroupBox):
    """The backups: the last one, the generations kept, the list, and "Back up now"."""

    def __init__(self, runner: OpRunner, show_status: Callable[[str], None], parent: QWidget | None = None) -> None:
        super().__init__("Backups of the vault", parent)
        self._runner = runner
        self._show_status = show_status
        self._loading = False
        self.state: BackupState | None = None
        self.model = RowTableModel(BACKUP_COLUMNS, key=lambda b: b.path, parent=self)
        self.last_label = value_label("Loading the backups…")
        self.generations_label = secondary_label("")
        self.backup_button = QPushButton("Back up now")
        self.backup_button.setToolTip("Write a consistent copy of the vault into its backups folder now")
        self.backup_button.clicked.connect(self.back_up_now)
        self.table = simple_table(self.model, stretch=3, name="Backups", fit=(0, 1, 2))
        listing = EmptyAware(self.table, "No backups in the vault's backups folder yet.")
        rows = self.table.verticalHeader().defaultSectionSize()
        listing.setFixedHeight(rows * TABLE_ROWS + self.table.horizontalHeader().sizeHint().height() + 4)
        row = QHBoxLayout()
        row.addWidget(self.last_label, 1)
        row.addWidget(self.backup_button, 0, Qt.AlignmentFlag.AlignTop)
        box = QVBoxLayout(self)
        box.addLayout(row)
        box.addWidget(self.generations_label)
        box.addWidget(listing)
        runner.changes_arrived.connect(self._on_changes)

    def refresh(self) -> None:
        """Read the backups folder again."""
        if self._loading:
            return
        self._loading = True
        self._runner.read(load_backups, self._arrived, on_error=self._failed)

    def _arrived(self, state: BackupState) -> None:
        self._loading = False
        self.state = state
        self.model.set_rows(list(state.backups))
        last, generations = describe_backups(state)
        self.last_label.setText(last)
        self.generations_label.setText(generations)

    def _failed(self, error: BaseException) -> None:
        self._loading = False
        self._runner.report(error)

    def back_up_now(self) -> None:
        """Write a backup now (on the writer: it waits for the write in progress, then copies)."""
        self.backup_button.setEnabled(False)
        self.last_label.setText("Backing up…")
        self._runner.write(lambda vault: vault.backups.now(), self._backed_up, on_error=self._backup_failed)

    def _backed_up(self, backup: Backup) -> None:
        self.backup_button.setEnabled(True)
        self._show_status(f"Backed up to {Path(backup.path).name} ({size_text(backup.size_bytes)}).")
        self.refresh()

    def _backup_failed(self, error: BaseException) -> None:
        self.backup_button.setEnabled(True)
        self.refresh()
        self._runner.report(error)

    def _on_changes(self, changes: Sequence[Change]) -> None:
        if self.state is None:
            return
        if any(c.type in ("backup.created", "settings.changed") or c.type.startswith("forget.") for c in changes):
            self.refresh()
