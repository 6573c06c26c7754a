"""The strip that follows a file ingest: a progress bar with Cancel, then a summary with problems."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine.documents.ingest import IngestProgress
from ui.format import one_line
from ui.ingest_task import IngestOutcome
from ui.widgets.labels import secondary_label

PROBLEM_LINES = 4


class IngestPanel(QWidget):
    """Hidden until an ingest starts; shows its progress, then its summary until dismissed.

    Signals:
        cancel_requested(): the person pressed Cancel.
    """

    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.progress_label = QLabel("")
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self._on_cancel)
        self.queue_label = secondary_label("")
        self.queue_label.setWordWrap(False)

        self.summary_frame = QFrame()
        self.summary_frame.setObjectName("ingestSummary")
        self.summary_frame.setFrameShape(QFrame.Shape.StyledPanel)
        self.summary_label = QLabel("")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label.setAccessibleName("Ingest summary")
        self.problems = QPlainTextEdit()
        self.problems.setReadOnly(True)
        self.problems.setAccessibleName("Files with problems")
        self.problems.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        line = self.problems.fontMetrics().lineSpacing()
        self.problems.setFixedHeight(line * PROBLEM_LINES + 12)
        dismiss = QToolButton()
        dismiss.setText("Dismiss")
        dismiss.setAutoRaise(True)
        dismiss.clicked.connect(self.dismiss)
        top = QHBoxLayout()
        top.addWidget(self.summary_label, 1)
        top.addWidget(dismiss, 0, Qt.AlignmentFlag.AlignTop)
        box = QVBoxLayout(self.summary_frame)
        box.setContentsMargins(10, 6, 6, 8)
        box.addLayout(top)
        box.addWidget(self.problems)

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.progress_label)
        row.addWidget(self.progress, 1)
        row.addWidget(self.queue_label)
        row.addWidget(self.cancel_button)
        self._progress_widgets = (
            self.progress_label,
            self.progress,
            self.queue_label,
            self.cancel_button,
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.summary_frame)
        self._show_progress(False)
        self.summary_frame.hide()
        self.hide()

    @property
    def in_progress(self) -> bool:
        """True while the progress bar is shown."""
        return not self.progress.isHidden()

    @property
    def summary(self) -> str:
        """The last summary shown ("" before the first)."""
        return self.summary_label.text()

    def start(self, paths: tuple[str, ...], queued: int = 0) -> None:
        """Show an ingest of ``paths`` starting (busy until the files have been counted)."""
        self.summary_frame.hide()
        self.progress.setRange(0, 0)
        names = ", ".join(Path(p).name or p for p in paths[:3])
        more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
        self.progress_label.setText(f"Reading {one_line(names, 60)}{more}…")
        self.cancel_button.setEnabled(True)
        self.set_queued(queued)
        self._show_progress(True)
        self.show()

    def set_queued(self, queued: int) -> None:
        """Say how many more drops wait their turn."""
        self.queue_label.setText(f"+{queued} waiting" if queued else "")
        self.queue_label.setVisible(bool(queued) and self.in_progress)

    def update_progress(self, progress: IngestProgress, cancelling: bool) -> None:
        """Show ``progress``."""
        self.progress.setRange(0, max(progress.total, 1))
        self.progress.setValue(progress.done)
        self.progress.setFormat(f"%v of {progress.total:,} files")
        if not cancelling:
            name = Path(progress.current).name if progress.current else ""
            self.progress_label.setText(f"Ingesting {one_line(name, 48)}" if name else "Ingesting")

    def _on_cancel(self) -> None:
        self.cancel_button.setEnabled(False)
        self.progress_label.setText("Cancelling after this file…")
        self.cancel_requested.emit()

    def finish(self, outcome: IngestOutcome) -> None:
        """Replace the progress bar by ``outcome``'s summary and problems."""
        self.show_summary(outcome.summary, outcome.problems)

    def show_summary(self, text: str, problems: tuple[str, ...] = ()) -> None:
        """Show a summary line and the problems under it."""
        self._show_progress(False)
        self.summary_label.setText(text)
        self.problems.setPlainText("\n".join(problems))
        self.problems.setVisible(bool(problems))
        self.summary_frame.show()
        self.show()

    def dismiss(self) -> None:
        """Hide the summary."""
        self.summary_frame.hide()
        if not self.in_progress:
            self.hide()

    def _show_progress(self, visible: bool) -> None:
        for widget in self._progress_widgets:
            widget.setVisible(visible)
        if visible:
            self.queue_label.setVisible(bool(self.queue_label.text()))
