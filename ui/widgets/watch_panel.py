"""Watched folders in the Documents view: their state and last scan, and the question asked before
documents are deleted because their files are gone.

:class:`FolderWatching` makes the engine calls (on the runner) and reloads the folders' states when
the change feed reports ``watch.*``.
:class:`WatchPanel` lists ``vault.watcher.status()`` (folder · state · last scan) with "Watch
folder…", "Rescan" and "Stop watching".  :class:`HeldDeletions` shows one warning per folder whose
deletions are held — the folder vanished (an unplugged drive) or most of its files disappeared at
once — and asks: "Delete N documents whose files are gone" or "Keep them".  Nothing is deleted until
the person answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QItemSelection, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from engine.changes import Change
from engine.watching.contract import RootStatus, ScanResult
from ui.format import local_time, plural
from ui.models.rows import Column, RowTableModel
from ui.ops import OpRunner
from ui.throttle import Throttle
from ui.widgets.labels import heading_label, secondary_label
from ui.widgets.tables import EmptyAware, select_only_row, simple_table

REFRESH_INTERVAL_MS = 300
STATE_WORDS = {
    "ok": "in sync",
    "scanning": "scanning…",
    "paused": "waiting for you",
    "vanished": "folder gone",
    "error": "problem",
}


def scan_summary(result: ScanResult | None) -> str:
    """A scan's counts in words (only the ones that are not zero)."""
    if result is None:
        return "not scanned yet"
    counts = [
        (result.added, "added"),
        (result.updated, "updated"),
        (result.removed, "removed"),
        (result.unchanged, "unchanged"),
        (result.degraded, "degraded"),
        (result.quarantined, "quarantined"),
        (result.skipped, "skipped"),
        (result.failed, "failed"),
        (result.deferred, "still being written"),
    ]
    text = ", ".join(f"{n:,} {word}" for n, word in counts if n) or "no files"
    return f"{text} ({result.seconds:.1f} s)"


def needs_answer(root: RootStatus) -> bool:
    """True when deletions wait for the person's answer."""
    return root.held_deletions > 0 and root.state in ("paused", "vanished")


ROOT_COLUMNS: tuple[Column[RootStatus], ...] = (
    Column("Folder", lambda r: r.path.name or str(r.path), lambda r: str(r.path)),
    Column(
        "State",
        lambda r: STATE_WORDS.get(r.state, r.state),
        lambda r: r.error or "",
    ),
    Column(
        "Last scan",
        lambda r: local_time(r.last_scan_at) if r.last_scan_at else "",
        lambda r: scan_summary(r.last_result),
    ),
)


class WatchPanel(QWidget):
    """The watched folders and their buttons.

    Signals:
        watch_requested(str): watch this folder (chosen in the folder dialog).
        rescan_requested(str): scan this watched folder now.
        unwatch_requested(str): stop watching this folder (its documents stay).
    """

    watch_requested = Signal(str)
    rescan_requested = Signal(str)
    unwatch_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.roots = RowTableModel(ROOT_COLUMNS, key=lambda r: str(r.path), parent=self)
        self.table = simple_table(self.roots, stretch=0, name="Watched folders", fit=(1, 2))
        self.table.selectionModel().selectionChanged.connect(self._on_chosen)
        self.detail = secondary_label("")
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.add_button = QPushButton("Watch folder…")
        self.add_button.setToolTip("Keep a folder's documents in step with the vault")
        self.add_button.clicked.connect(self.choose_folder)
        self.rescan_button = QPushButton("Rescan")
        self.rescan_button.clicked.connect(self._on_rescan)
        self.remove_button = QPushButton("Stop watching")
        self.remove_button.setToolTip("Stop following the folder; its documents stay in the vault")
        self.remove_button.clicked.connect(self._on_remove)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.rescan_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(heading_label("Watched folders", scale=1.0))
        layout.addWidget(
            EmptyAware(
                self.table,
                "No watched folders. Watch one to keep its documents in step with the vault.",
            ),
            1,
        )
        layout.addWidget(self.detail)
        layout.addLayout(buttons)
        self._update_buttons()

    def set_roots(self, roots: Sequence[RootStatus]) -> None:
        """Show ``roots`` (keeps the chosen folder)."""
        chosen = self.chosen_path()
        self.roots.set_rows(list(roots))
        row = self.roots.row_of(chosen) if chosen else None
        if row is None and roots:
            row = 0
        if row is not None:
            select_only_row(self.table, row)
        self._show_detail()
        self._update_buttons()

    def chosen_path(self) -> str | None:
        """The folder chosen in the table."""
        rows = self.table.selectionModel().selectedRows()
        return str(self.roots.row_item(rows[0].row()).path) if rows else None

    def choose_folder(self) -> None:
        """Ask for a folder and watch it."""
        path = QFileDialog.getExistingDirectory(self, "Watch a folder", str(Path.home()))
        if path:
            self.watch_requested.emit(path)

    def _on_chosen(self, _new: QItemSelection, _old: QItemSelection) -> None:
        self._show_detail()
        self._update_buttons()

    def _show_detail(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            self.detail.setText("")
            return
        root = self.roots.row_item(rows[0].row())
        lines = [f"{root.path} — {STATE_WORDS.get(root.state, root.state)}"]
        if root.last_scan_at:
            lines.append(f"Last scan {local_time(root.last_scan_at)}: {scan_summary(root.last_result)}")
        if root.pending_paths:
            lines.append(f"{plural(root.pending_paths, 'file')} waiting to settle")
        if root.error:
            lines.append(root.error)
        self.detail.setText("\n".join(lines))

    def _update_buttons(self) -> None:
        chosen = self.chosen_path() is not None
        self.rescan_button.setEnabled(chosen)
        self.remove_button.setEnabled(chosen)

    def _on_rescan(self) -> None:
        path = self.chosen_path()
        if path:
            self.rescan_requested.emit(path)

    def _on_remove(self) -> None:
        path = self.chosen_path()
        if path:
            self.unwatch_requested.emit(path)


class HeldDeletionBanner(QFrame):
    """The question for one folder: delete the documents of the missing files, or keep them."""

    def __init__(self, root: RootStatus, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("warningBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.path = str(root.path)
        self.count = root.held_deletions
        icon = QLabel()
        size = self.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize)
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning).pixmap(size, size))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        documents = plural(self.count, "document")
        if root.state == "vanished":
            text = (
                f"The watched folder {root.path} is gone — an unplugged drive or a moved folder? "
                f"{documents} came from files in it. Nothing is deleted unless you say so."
            )
        else:
            text = (
                f"{plural(self.count, 'file')} disappeared from the watched folder {root.path} at "
                "once. Their documents are kept until you decide."
            )
        self.message = QLabel(text)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        noun = "document" if self.count == 1 else "documents"
        self.delete_button = QPushButton(f"Delete {self.count:,} {noun} whose files are gone")
        self.keep_button = QPushButton("Keep them")
        self.keep_button.setDefault(True)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.delete_button)
        buttons.addWidget(self.keep_button)
        texts = QVBoxLayout()
        texts.addWidget(self.message)
        texts.addLayout(buttons)
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 8, 10, 8)
        row.addWidget(icon)
        row.addLayout(texts, 1)

    def set_busy(self) -> None:
        """The answer is being carried out."""
        self.delete_button.setEnabled(False)
        self.keep_button.setEnabled(False)


class HeldDeletions(QWidget):
    """One :class:`HeldDeletionBanner` per folder that needs an answer (hidden when none does).

    Signals:
        confirm_requested(str): delete the documents of the missing files of this folder.
        keep_requested(str): keep them.
    """

    confirm_requested = Signal(str)
    keep_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._banners: dict[str, HeldDeletionBanner] = {}
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.hide()

    def banners(self) -> list[HeldDeletionBanner]:
        """The questions shown, in folder order."""
        return list(self._banners.values())

    def banner_for(self, path: str | Path) -> HeldDeletionBanner | None:
        """The question about ``path`` (None when none is asked)."""
        return self._banners.get(str(path))

    def set_roots(self, roots: Sequence[RootStatus]) -> None:
        """Ask about every folder in ``roots`` that :func:`needs_answer`."""
        wanted = {str(r.path): r for r in roots if needs_answer(r)}
        for path in [p for p in self._banners if p not in wanted]:
            banner = self._banners.pop(path)
            self._layout.removeWidget(banner)
            banner.deleteLater()
        for path, root in wanted.items():
            old = self._banners.get(path)
            if old is not None and old.count == root.held_deletions:
                continue
            if old is not None:
                self._layout.removeWidget(old)
                old.deleteLater()
            banner = HeldDeletionBanner(root, self)
            banner.delete_button.clicked.connect(lambda _=False, p=path: self._answer(p, True))
            banner.keep_button.clicked.connect(lambda _=False, p=path: self._answer(p, False))
            self._banners[path] = banner
            self._layout.addWidget(banner)
        self.setVisible(bool(self._banners))

    def _answer(self, path: str, delete: bool) -> None:
        banner = self._banners.get(path)
        if banner is not None:
            banner.set_busy()
        (self.confirm_requested if delete else self.keep_requested).emit(path)


class FolderWatching(QObject):
    """The watched folders' engine calls, on the runner, and their states kept current.

    Signals:
        roots_loaded(list): the folders' states (:class:`RootStatus`), after every load or change.
    """

    roots_loaded = Signal(list)

    def __init__(self, runner: OpRunner, show_status: Callable[[str], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._show_status = show_status
        self._loading = False
        self.roots: list[RootStatus] = []
        self._throttle = Throttle(REFRESH_INTERVAL_MS, self.refresh, self)
        runner.changes_arrived.connect(self._on_changes)

    def refresh(self) -> None:
        """Load the folders' states."""
        if self._loading:
            self._throttle.trigger()
            return
        self._loading = True
        self._runner.read(lambda vault: vault.watcher.status(), self._arrived, on_error=self._failed)

    def _arrived(self, roots: list[RootStatus]) -> None:
        self._loading = False
        self.roots = list(roots)
        self.roots_loaded.emit(self.roots)

    def _failed(self, error: BaseException) -> None:
        self._loading = False
        self._runner.report(error)

    def _on_changes(self, changes: Sequence[Change]) -> None:
        if any(c.type.startswith("watch.") for c in changes):
            self._throttle.trigger()

    def watch(self, path: str | Path) -> None:
        """Watch a folder (scanned at once, then kept in step)."""
        folder = str(path)
        self._runner.write(lambda vault: vault.watcher.watch(folder), self._arrived)
        self._show_status(f"Watching {folder}; its documents are being read.")

    def unwatch(self, path: str | Path) -> None:
        """Stop watching a folder; its documents stay."""
        folder = str(path)
        self._runner.write(lambda vault: vault.watcher.unwatch(folder), self._arrived)

    def rescan(self, path: str | Path) -> None:
        """Reconcile a watched folder with the vault now."""
        folder = str(path)
        self._show_status(f"Scanning {folder}…")
        self._runner.write(lambda vault: vault.watcher.rescan(folder), lambda result: self._scanned(folder, result))

    def _scanned(self, folder: str, result: ScanResult) -> None:
        self._show_status(f"Scanned {folder}: {scan_summary(result)}.")
        self.refresh()

    def confirm_deletions(self, path: str | Path) -> None:
        """Delete the documents whose files vanished from ``path`` (the person said so)."""
        folder = str(path)
        self._runner.write(
            lambda vault: vault.watcher.confirm_deletions(folder),
            lambda result: self._answered(f"{plural(result.removed, 'document')} deleted."),
        )

    def keep_documents(self, path: str | Path) -> None:
        """Keep the documents whose files vanished from ``path``."""
        folder = str(path)
        self._runner.write(
            lambda vault: vault.watcher.cancel_deletions(folder),
            lambda _none: self._answered("The documents were kept."),
        )

    def _answered(self, text: str) -> None:
        self._show_status(text)
        self.refresh()
