"""The Conflicts view: contradicting memories side by side with their evidence; keep one or both.

Open conflicts are few, so the whole queue is loaded at once (again after every ``conflict.*``
change, throttled).  The view loads at start-up even while hidden, because the navigation shows the
number of open conflicts as a badge (:attr:`ConflictsView.badge_changed`).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QItemSelection, Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.changes import Change
from engine.facts.conflicts import ConflictView
from engine.facts.model import Fact
from ui.context import ViewContext
from ui.format import local_time, percent, plural, subject_label
from ui.models.rows import Column, RowTableModel
from ui.ops import OpRunner
from ui.throttle import Throttle
from ui.widgets.evidence import Evidence, EvidenceView, load_evidence
from ui.widgets.labels import heading_label, secondary_label, value_label
from ui.widgets.tables import select_only_row, simple_table

REFRESH_INTERVAL_MS = 300
QUEUE_LIMIT = 500
QUEUE_ROWS_SHOWN = 6  # the queue is fitted to this many rows at most; the sides get the rest of the height
QUEUE_SLACK_PX = 6
EMPTY_TEXT = (
    "No open conflicts. When a new memory contradicts one Cairn already holds, both wait here for you to choose."
)

CONFLICT_COLUMNS: tuple[Column[ConflictView], ...] = (
    Column("About", lambda c: subject_label(c.subject)),
    Column("Predicate", lambda c: c.predicate),
    Column(
        "The two sides",
        lambda c: f"{c.fact_a.object_text}  ·  {c.fact_b.object_text}",
        lambda c: f"A: {c.fact_a.statement}\nB: {c.fact_b.statement}",
    ),
    Column("Found", lambda c: local_time(c.created_at)),
)


def load_queue(vault: Vault) -> tuple[list[ConflictView], int]:
    """The open conflicts (newest first) and how many there are in all."""
    return vault.conflicts(status="open", limit=QUEUE_LIMIT), vault.counts().open_conflicts


class ConflictSide(QGroupBox):
    """One side of a conflict: its value, trust, dates, evidence and a "Keep" button."""

    def __init__(self, letter: str, runner: OpRunner, parent: QWidget | None = None) -> None:
        super().__init__(f"Side {letter}", parent)
        self._runner = runner
        self._generation = 0
        self.fact: Fact | None = None
        self.value = heading_label("", scale=1.25)
        self.value.setWordWrap(True)
        self.statement = secondary_label("")
        self.fields = {key: value_label("") for key in ("trust", "said", "true", "source")}
        form = QFormLayout()
        form.addRow("Trust", self.fields["trust"])
        form.addRow("Learned", self.fields["said"])
        form.addRow("True from", self.fields["true"])
        form.addRow("Source", self.fields["source"])
        self.evidence = EvidenceView()
        self.evidence.setMinimumHeight(100)
        self.keep_button = QPushButton(f"Keep {letter}")
        self.keep_button.setToolTip(f"{letter} wins; the other side is retired to the archive (still in its history)")
        box = QVBoxLayout(self)
        box.addWidget(self.value)
        box.addWidget(self.statement)
        box.addLayout(form)
        box.addWidget(self.evidence, 1)
        box.addWidget(self.keep_button)

    def show_fact(self, fact: Fact) -> None:
        """Show ``fact`` and load its evidence."""
        self.fact = fact
        self.value.setText(fact.object_text)
        self.statement.setText(fact.statement)
        self.fields["trust"].setText(f"{fact.standing}, confidence {percent(fact.confidence)}")
        self.fields["said"].setText(local_time(fact.recorded_at))
        self.fields["true"].setText(local_time(fact.valid_from) or "not stated")
        self.fields["source"].setText(
            {"user": "you", "manual": "added by hand"}.get(fact.source_role, fact.source_role)
        )
        self._generation += 1
        generation = self._generation
        self.evidence.show_loading()
        self._runner.read(
            lambda vault: load_evidence(vault, fact),
            lambda evidence: self._evidence_arrived(generation, evidence),
        )

    def _evidence_arrived(self, generation: int, evidence: Evidence) -> None:
        if generation == self._generation:
            self.evidence.show_evidence(evidence)


class ConflictsView(QWidget):
    """The queue of open conflicts and the chosen one's two sides.

    Signals:
        badge_changed(int): the number of open conflicts changed (the navigation badge).
        navigate_requested(str, object): open a side's source (``"event"`` or ``"span"``, id).
    """

    badge_changed = Signal(int)
    navigate_requested = Signal(str, object)

    def __init__(self, context: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = context.runner
        self._show_status = context.show_status
        self._open_count = 0
        self._loading = False
        self._stale = False
        self._resolving: set[int] = set()
        self.loaded = False
        self.model = RowTableModel(CONFLICT_COLUMNS, key=lambda c: c.id, parent=self)
        self._throttle = Throttle(REFRESH_INTERVAL_MS, self.refresh, self)

        self.count_label = secondary_label("")
        self.table = simple_table(self.model, stretch=2, name="Open conflicts", fit=(0, 1, 3))
        self.table.selectionModel().selectionChanged.connect(self._on_selection)

        self.side_a = ConflictSide("A", context.runner)
        self.side_b = ConflictSide("B", context.runner)
        self.side_a.keep_button.clicked.connect(lambda: self.resolve_current("a"))
        self.side_b.keep_button.clicked.connect(lambda: self.resolve_current("b"))
        for side in (self.side_a, self.side_b):
            side.evidence.event_activated.connect(lambda event_id: self.navigate_requested.emit("event", event_id))
            side.evidence.span_activated.connect(lambda span_id: self.navigate_requested.emit("span", span_id))
        self.keep_both_button = QPushButton("Keep both")
        self.keep_both_button.setToolTip("Both stay: they are not a contradiction (for example, two homes)")
        self.keep_both_button.clicked.connect(lambda: self.resolve_current(None))
        self.reason_label = secondary_label("")
        self.empty_label = secondary_label(EMPTY_TEXT)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)

        sides = QWidget()
        sides_box = QVBoxLayout(sides)
        sides_box.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.side_a, 1)
        row.addWidget(self.side_b, 1)
        sides_box.addLayout(row, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.reason_label, 1)
        bottom.addWidget(self.keep_both_button)
        sides_box.addLayout(bottom)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(sides)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self._fitted_rows = 0
        self._fit_queue(QUEUE_ROWS_SHOWN)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.splitter)
        self.stack.addWidget(self.empty_label)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        header = QHBoxLayout()
        header.addWidget(heading_label("Conflicts", scale=1.45))
        header.addWidget(self.count_label, 1, Qt.AlignmentFlag.AlignBottom)
        layout.addLayout(header)
        layout.addWidget(
            secondary_label(
                "Two memories say different things about the same slot. Keep the one that is "
                "true now; the other is retired but stays in the history."
            )
        )
        layout.addWidget(self.stack, 1)
        context.runner.changes_arrived.connect(self._on_changes)
        self._show_sides(None)
        self.refresh()

    # -- public ------------------------------------------------------------------------------------
    @property
    def open_count(self) -> int:
        """Open conflicts in the vault (what the badge shows)."""
        return self._open_count

    def current_conflict(self) -> ConflictView | None:
        """The conflict whose sides are shown."""
        rows = self.table.selectionModel().selectedRows()
        return self.model.row_item(rows[0].row()) if rows else None

    def select_conflict(self, conflict_id: int) -> bool:
        """Show ``conflict_id``; False when it is not open."""
        row = self.model.row_of(conflict_id)
        if row is None:
            return False
        select_only_row(self.table, row)
        return True

    def refresh(self) -> None:
        """Load the queue again."""
        if self._loading:
            self._stale = True
            return
        self._loading = True
        self._stale = False
        self._runner.read(load_queue, self._queue_arrived, on_error=self._load_failed)

    def resolve_current(self, side: str | None) -> None:
        """Resolve the conflict shown: ``"a"`` or ``"b"`` wins, None keeps both."""
        conflict = self.current_conflict()
        if conflict is None or conflict.id in self._resolving:
            return
        winner = {"a": conflict.fact_a.id, "b": conflict.fact_b.id}.get(side or "")
        self._resolving.add(conflict.id)
        self._set_buttons_enabled(False)
        conflict_id = conflict.id
        self._runner.write(
            lambda vault: vault.conflicts.resolve(conflict_id, winner),
            lambda resolved: self._resolved(resolved, side),
            on_error=lambda error: self._resolve_failed(conflict_id, error),
        )

    # -- loading -----------------------------------------------------------------------------------
    def _queue_arrived(self, result: tuple[list[ConflictView], int]) -> None:
        self._loading = False
        conflicts, total = result
        current = self.current_conflict()
        row = self.table.currentIndex().row()
        self.model.set_rows(conflicts)
        self.loaded = True
        self._fit_queue(self.model.rowCount())
        self._set_count(total)
        if current is not None and self.select_conflict(current.id):
            pass
        elif self.model.rowCount():
            select_only_row(self.table, min(max(row, 0), self.model.rowCount() - 1))
        else:
            self._show_sides(None)
        self.stack.setCurrentIndex(0 if self.model.rowCount() else 1)
        if self._stale:
            self._throttle.trigger()

    def _fit_queue(self, rows: int) -> None:
        """Make the queue as tall as ``rows`` rows (at most :data:`QUEUE_ROWS_SHOWN`); the sides get the rest.

        Only when that number changes, so a splitter the person dragged stays where it is between refreshes.
        """
        rows = max(1, min(rows, QUEUE_ROWS_SHOWN))
        if rows == self._fitted_rows:
            return
        self._fitted_rows = rows
        table = self.table
        height = (
            table.horizontalHeader().sizeHint().height()
            + rows * table.verticalHeader().defaultSectionSize()
            + 2 * table.frameWidth()
            + QUEUE_SLACK_PX
        )
        total = sum(self.splitter.sizes()) or QUEUE_SLACK_PX * 100
        self.splitter.setSizes([height, max(total - height, height)])

    def _load_failed(self, error: BaseException) -> None:
        self._loading = False
        self._runner.report(error)

    def _set_count(self, total: int) -> None:
        self.count_label.setText(f"{plural(total, 'open conflict')}" if total else "")
        if total != self._open_count:
            self._open_count = total
            self.badge_changed.emit(total)

    def _on_changes(self, changes: Sequence[Change]) -> None:
        if any(c.type.startswith("conflict.") for c in changes):
            self._throttle.trigger()

    # -- showing -----------------------------------------------------------------------------------
    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._show_sides(self.current_conflict())

    def _show_sides(self, conflict: ConflictView | None) -> None:
        for side in (self.side_a, self.side_b):
            side.setVisible(conflict is not None)
        self.keep_both_button.setVisible(conflict is not None)
        if conflict is None:
            self.reason_label.setText("")
            return
        self.side_a.show_fact(conflict.fact_a)
        self.side_b.show_fact(conflict.fact_b)
        self.reason_label.setText(
            f"Why this is a conflict: {conflict.reason}. Found {local_time(conflict.created_at)}."
        )
        self._set_buttons_enabled(conflict.id not in self._resolving)

    def _set_buttons_enabled(self, enabled: bool) -> None:
        for button in (self.side_a.keep_button, self.side_b.keep_button, self.keep_both_button):
            button.setEnabled(enabled)

    # -- resolving ---------------------------------------------------------------------------------
    def _resolved(self, resolved: ConflictView, side: str | None) -> None:
        self._resolving.discard(resolved.id)
        row = self.model.row_of(resolved.id) or 0
        self.model.remove_key(resolved.id)
        self._set_count(max(0, self._open_count - 1))
        kept = {
            "a": f"Kept “{resolved.fact_a.object_text}”.",
            "b": f"Kept “{resolved.fact_b.object_text}”.",
        }.get(side or "", "Kept both.")
        self._show_status(f"Conflict resolved. {kept}")
        if self.model.rowCount():
            select_only_row(self.table, min(row, self.model.rowCount() - 1))
        else:
            self._show_sides(None)
            self.stack.setCurrentIndex(1)
        self._throttle.trigger()

    def _resolve_failed(self, conflict_id: int, error: BaseException) -> None:
        self._resolving.discard(conflict_id)
        self._set_buttons_enabled(True)
        self._runner.report(error)
        self._throttle.trigger()
