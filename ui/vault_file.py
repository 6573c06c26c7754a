"""The whole vault in one file, from the window: File → Export, Restore, and the Backups dialog.

Each runs off the GUI thread through the :class:`~ui.ops.OpRunner` with a progress dialog that follows the engine's
``(stage, done, total)`` reports (they arrive on a worker thread and cross to the GUI thread through a queued
signal).  Nothing here is modal: the window stays usable, and the outcome is shown in a message box that does not
block (and in the status bar).  A restore always makes a new vault in a folder the person picks; "Open it now"
starts Cairn on it and quits this window's Cairn, since one process owns one vault.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QProcess, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QMessageBox,
    QProgressDialog,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.archive import ArchiveReport
from engine.backups import Backup
from engine.errors import VaultError
from ui.ops import OpRunner

STAGES = {
    "export": "Writing your records…",
    "originals": "Adding the original files…",
    "restore": "Restoring the records…",
    "vectors": "Making the vectors…",
}
ARCHIVE_FILTER = "Cairn export (*.zip)"
RESTORE_FILTER = "Cairn export or backup (*.zip *.db);;All files (*)"


class Progress(QObject):
    """A progress dialog fed from any thread (``report`` is the engine's progress callback)."""

    reported = Signal(str, int, int)

    def __init__(self, parent: QWidget, title: str) -> None:
        super().__init__(parent)
        self.dialog = QProgressDialog(title, "", 0, 0, parent)
        self.dialog.setWindowTitle(title)
        self.dialog.setCancelButton(None)  # an export or a restore stops cleanly only at its end
        self.dialog.setMinimumDuration(300)
        self.dialog.setAutoClose(False)
        self.dialog.setWindowModality(Qt.WindowModality.NonModal)
        self.reported.connect(self._show, Qt.ConnectionType.QueuedConnection)
        self.dialog.setValue(0)

    def report(self, stage: str, done: int, total: int) -> None:
        """Called by the engine on its thread."""
        self.reported.emit(stage, done, total)

    def _show(self, stage: str, done: int, total: int) -> None:
        self.dialog.setLabelText(STAGES.get(stage, stage))
        self.dialog.setMaximum(max(total, 1))
        self.dialog.setValue(min(done, max(total, 1)))

    def close(self) -> None:
        """Close the dialog."""
        self.dialog.reset()
        self.dialog.close()


class VaultFiles(QObject):
    """Export, restore and backups for one window.

    Signals (GUI thread): ``exported(ArchiveReport)``, ``restored(object)`` (a RestoreReport), ``failed(str)``.
    ``open_restored`` starts Cairn on a restored vault and asks this app to quit (:attr:`quit_requested`).
    """

    exported = Signal(object)
    restored = Signal(object)
    failed = Signal(str)
    quit_requested = Signal()

    def __init__(self, window: QWidget, runner: OpRunner, show_status: Any) -> None:
        super().__init__(window)
        self._window = window
        self._runner = runner
        self._show_status = show_status
        self.progress: Progress | None = None
        self.outcome: QMessageBox | None = None  # the last result shown (kept for the person, and for tests)

    # -- export ------------------------------------------------------------------------------------
    def choose_export(self) -> None:
        """Ask where to write the archive, then export."""
        suggested = Path.home() / f"cairn-export-{datetime.now():%Y-%m-%d}.zip"
        path, _filter = QFileDialog.getSaveFileName(self._window, "Export the vault", str(suggested), ARCHIVE_FILTER)
        if path:
            self.export_to(Path(path) if path.endswith(".zip") else Path(path + ".zip"))

    def export_to(self, path: Path) -> None:
        """Export the vault to ``path`` with progress."""
        progress = self.progress = Progress(self._window, "Exporting the vault")
        self._runner.read(
            lambda vault: vault.export(path, progress=progress.report),
            self._on_exported,
            on_error=self._on_error,
        )

    def _on_exported(self, report: ArchiveReport) -> None:
        self._close_progress()
        kinds = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in report.counts.items() if n) or "an empty vault"
        text = f"Exported to {report.path} ({report.size_bytes / 1_048_576:.1f} MB): {kinds}."
        detail = "\n".join(report.notes)
        self._tell("Vault exported", text, detail)
        self._show_status(f"Exported to {report.path}")
        self.exported.emit(report)

    # -- restore -----------------------------------------------------------------------------------
    def choose_restore(self, source: Path | None = None) -> None:
        """Ask for an export or a backup (unless given) and a new folder, then restore."""
        if source is None:
            path, _filter = QFileDialog.getOpenFileName(
                self._window, "Restore from an export or a backup", str(Path.home()), RESTORE_FILTER
            )
            if not path:
                return
            source = Path(path)
        folder = QFileDialog.getExistingDirectory(
            self._window, "Choose a new, empty folder for the restored vault", str(Path.home())
        )
        if folder:
            self.restore_into(source, Path(folder))

    def restore_into(self, source: Path, folder: Path) -> None:
        """Restore ``source`` into the new vault folder ``folder`` with progress."""
        from engine.restore import restore_vault  # the restore opens a vault of its own: not one of this window's

        progress = self.progress = Progress(self._window, "Restoring a vault")
        self._runner.read(
            lambda _vault: restore_vault(source, folder, progress=progress.report),
            self._on_restored,
            on_error=self._on_error,
        )

    def _on_restored(self, report: Any) -> None:
        self._close_progress()
        counts = report.counts
        text = (
            f"Restored into {report.vault}: {counts['events']} events, {counts['facts']} memories, "
            f"{counts['documents']} documents, {counts['collections']} collections."
        )
        box = self._tell("Vault restored", text, "\n".join(report.notes))
        opener = box.addButton("Open it now", QMessageBox.ButtonRole.AcceptRole)
        opener.clicked.connect(lambda: self.open_restored(Path(report.vault)))
        self._show_status(f"Restored into {report.vault}")
        self.restored.emit(report)

    def open_restored(self, folder: Path) -> bool:
        """Start Cairn on ``folder`` and ask this app to quit; False when it could not be started."""
        started, _pid = QProcess.startDetached(sys.executable, ["-m", "app", "--vault", str(folder)])
        if not started:
            self._show_status(f"Cairn could not be started on {folder}; run: cairn --vault {folder}")
            return False
        self.quit_requested.emit()
        return True

    # -- backups -----------------------------------------------------------------------------------
    def show_backups(self) -> BackupsDialog:
        """The backups dialog (non-modal)."""
        dialog = BackupsDialog(self._runner, self, self._window)
        dialog.show()
        return dialog

    # -- shared ------------------------------------------------------------------------------------
    def _on_error(self, error: BaseException) -> None:
        self._close_progress()
        if isinstance(error, VaultError):
            self._show_status(error.message)
            self.failed.emit(error.message)
            self._tell("That did not work", error.message, error.fix, icon=QMessageBox.Icon.Warning)
            return
        self.failed.emit(str(error))
        self._runner.report(error)

    def _close_progress(self) -> None:
        if self.progress is not None:
            self.progress.close()
            self.progress = None

    def _tell(
        self, title: str, text: str, detail: str = "", *, icon: QMessageBox.Icon = QMessageBox.Icon.Information
    ) -> QMessageBox:
        box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Close, self._window)
        if detail:
            box.setInformativeText(detail)
        box.setWindowModality(Qt.WindowModality.NonModal)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        box.show()
        self.outcome = box
        return box


class BackupsDialog(QDialog):
    """The vault's backups, newest first, with "Back up now" and "Restore…" (into a new vault)."""

    def __init__(self, runner: OpRunner, files: VaultFiles, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Backups")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        self._runner = runner
        self._files = files
        self.backups: list[Backup] = []
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Made", "Size", "File"])
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.empty = QLabel("No backups yet. Cairn makes one a day; forgetting makes a fresh one.")
        self.empty.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.now_button = QPushButton("Back up now")
        self.restore_button = QPushButton("Restore…")
        self.restore_button.setToolTip("Make a new vault from the chosen backup (this vault stays as it is)")
        buttons.addButton(self.now_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.restore_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.close)
        self.now_button.clicked.connect(self.back_up_now)
        self.restore_button.clicked.connect(self.restore_selected)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(self.empty)
        layout.addWidget(buttons)
        self.resize(640, 320)
        self._update_buttons()
        self.refresh()

    def refresh(self) -> None:
        """Read the list again."""
        self._runner.read(lambda vault: vault.backups(), self._show)

    def back_up_now(self) -> None:
        """Write a backup now, then list it."""
        self.now_button.setEnabled(False)

        def done(_backup: Backup) -> None:
            self.now_button.setEnabled(True)
            self.refresh()

        self._runner.write(lambda vault: vault.backups.now(), done)

    def restore_selected(self) -> None:
        """Restore the chosen backup into a new vault."""
        row = self.table.currentRow()
        if 0 <= row < len(self.backups):
            self._files.choose_restore(Path(self.backups[row].path))

    def _show(self, backups: list[Backup]) -> None:
        self.backups = list(backups)
        self.table.setRowCount(len(backups))
        for row, backup in enumerate(backups):
            cells = (
                backup.created_at.astimezone().strftime("%Y-%m-%d %H:%M"),
                f"{backup.size_bytes / 1_048_576:.1f} MB",
                backup.path,
            )
            for column, text in enumerate(cells):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.table.setVisible(bool(backups))
        self.empty.setVisible(not backups)
        if backups and self.table.currentRow() < 0:
            self.table.selectRow(0)
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.restore_button.setEnabled(self.table.currentRow() >= 0 and bool(self.backups))
