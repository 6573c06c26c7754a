"""What two subjects share (``vault.workspace.open_intersection``): their relationship as evidence and synthesis.

There is no edge between subjects: a relationship *is* everything tagged with both — observations, current
memories, understandings and chat turns.  The dialog lists the first three and counts the turns; it is not modal,
so several can be compared, and opening another intersection reuses it.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QPushButton,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from engine.workspace.model import Intersection, TaggedFact
from ui.format import plural, subject_label
from ui.models.rows import RowTableModel
from ui.widgets.labels import heading_label, secondary_label
from ui.widgets.tables import EmptyAware, simple_table
from ui.widgets.workspace_items import (
    OBSERVATION_COLUMNS,
    TAGGED_FACT_COLUMNS,
    UNDERSTANDING_COLUMNS,
    understanding_html,
)


def intersection_summary(found: Intersection) -> str:
    """``3 observations · 1 memory · 1 understanding · 2 chat turns``."""
    return " · ".join(
        (
            plural(len(found.observations), "observation"),
            plural(len(found.facts), "memory", "memories"),
            plural(len(found.understandings), "understanding"),
            plural(found.events, "chat turn"),
        )
    )


class IntersectionDialog(QDialog):
    """Everything two subjects share.

    Signals:
        subject_requested(str): open one of the two subjects (its engine name).
        fact_requested(int): open a shared memory in the Memories view.
    """

    subject_requested = Signal(str)
    fact_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.intersection: Intersection | None = None
        self.observations_model = RowTableModel(OBSERVATION_COLUMNS, key=lambda o: o.id, parent=self)
        self.facts_model = RowTableModel(TAGGED_FACT_COLUMNS, key=lambda f: f.id, parent=self)
        self.understandings_model = RowTableModel(UNDERSTANDING_COLUMNS, key=lambda u: u.id, parent=self)
        self.title_label = heading_label("", scale=1.2)
        self.counts_label = secondary_label("")
        observations = simple_table(self.observations_model, stretch=1, name="Shared observations", fit=(0, 3, 4))
        facts = simple_table(self.facts_model, stretch=0, name="Shared memories", fit=(1,))
        facts.doubleClicked.connect(self._open_fact)
        understandings = simple_table(
            self.understandings_model, stretch=1, name="Shared understandings", fit=(0, 2, 3, 4, 5)
        )
        understandings.selectionModel().currentRowChanged.connect(self._show_understanding)
        self.understanding_text = QTextBrowser()
        self.understanding_text.setOpenLinks(False)
        synthesis = QWidget()
        synthesis_layout = QVBoxLayout(synthesis)
        synthesis_layout.setContentsMargins(0, 0, 0, 0)
        synthesis_layout.addWidget(EmptyAware(understandings, "No relationship has been written for these two yet."), 1)
        synthesis_layout.addWidget(self.understanding_text, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(EmptyAware(observations, "No observation is tagged with both."), "Observations")
        self.tabs.addTab(EmptyAware(facts, "No current memory is tagged with both."), "Memories")
        self.tabs.addTab(synthesis, "Understandings")
        self.open_a = QPushButton()
        self.open_a.clicked.connect(lambda: self._open_subject(0))
        self.open_b = QPushButton()
        self.open_b.clicked.connect(lambda: self._open_subject(1))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.open_a, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.open_b, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title_label)
        layout.addWidget(self.counts_label)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)
        self.resize(self.fontMetrics().averageCharWidth() * 110, self.fontMetrics().height() * 30)

    def set_intersection(self, found: Intersection) -> None:
        """Show what ``found.subject_a`` and ``found.subject_b`` share."""
        self.intersection = found
        a, b = subject_label(found.subject_a), subject_label(found.subject_b)
        self.setWindowTitle(f"{a} & {b}")
        self.title_label.setText(f"What {a} and {b} share")
        self.counts_label.setText(intersection_summary(found))
        self.observations_model.set_rows(found.observations)
        self.facts_model.set_rows(found.facts)
        self.understandings_model.set_rows(found.understandings)
        self.understanding_text.setHtml(understanding_html(found.understandings[0]) if found.understandings else "")
        self.tabs.setTabText(0, f"Observations ({len(found.observations)})")
        self.tabs.setTabText(1, f"Memories ({len(found.facts)})")
        self.tabs.setTabText(2, f"Understandings ({len(found.understandings)})")
        self.open_a.setText(f"Open {a}")
        self.open_b.setText(f"Open {b}")

    def _show_understanding(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.understanding_text.setHtml(understanding_html(self.understandings_model.row_item(current.row())))

    def _open_fact(self, index: QModelIndex) -> None:
        fact = self.facts_model.row_item(index.row())
        if isinstance(fact, TaggedFact):
            self.fact_requested.emit(fact.id)

    def _open_subject(self, which: int) -> None:
        if self.intersection is not None:
            self.subject_requested.emit((self.intersection.subject_a, self.intersection.subject_b)[which])
