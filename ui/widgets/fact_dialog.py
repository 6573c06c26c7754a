"""The dialog for adding a memory by hand or correcting one: about whom, what, and the value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from engine.facts.model import Fact
from ui.format import OWNER_LABEL, subject_label, subject_name
from ui.widgets.fact_filters import combo_edit
from ui.widgets.labels import secondary_label


@dataclass(frozen=True, slots=True)
class FactInput:
    """What the person typed."""

    subject: str
    predicate: str
    value: str


class FactDialog(QDialog):
    """Asks for a subject, a predicate and a value.

    Opened with :meth:`QDialog.open` (not ``exec``), so the rest of the app keeps running and tests
    can fill it in; read :meth:`values` after ``accepted``.
    """

    def __init__(
        self,
        *,
        subjects: Sequence[str],
        predicates: Sequence[str],
        fact: Fact | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Correct a memory" if fact else "Add a memory")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.subject = QComboBox()
        self.subject.setEditable(True)
        self.subject.addItems(_unique([OWNER_LABEL, *(subject_label(s) for s in subjects)]))
        self.predicate = QComboBox()
        self.predicate.setEditable(True)
        self.predicate.addItems(_unique(predicates))
        self.value = QLineEdit()
        self.value.setPlaceholderText("e.g. React, Lisbon, 2026-04-01")
        if fact is not None:
            self.subject.setCurrentText(subject_label(fact.subject))
            self.predicate.setCurrentText(fact.predicate)
            self.value.setText(fact.object_text)
        else:
            self.subject.setCurrentText(OWNER_LABEL)
            self.predicate.setCurrentText("")
        self.value.selectAll()

        form = QFormLayout()
        form.addRow("About", self.subject)
        form.addRow("Predicate", self.predicate)
        form.addRow("Value", self.value)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Save new version" if fact else "Add")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        for editor in (self.value, combo_edit(self.subject), combo_edit(self.predicate)):
            editor.textChanged.connect(self._update_ok)
        note = (
            "The old version stays in the memory's history."
            if fact
            else "A predicate from the list, or your own words (kept as a custom predicate)."
        )
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(secondary_label(note))
        layout.addWidget(self.buttons)
        self.setMinimumWidth(self.fontMetrics().averageCharWidth() * 60)
        self._update_ok()

    def values(self) -> FactInput:
        """The subject (engine name), predicate and value typed."""
        return FactInput(
            subject_name(self.subject.currentText()),
            self.predicate.currentText().strip(),
            self.value.text().strip(),
        )

    def _update_ok(self) -> None:
        values = self.values()
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(bool(values.subject and values.predicate and values.value))


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(item for item in items if item))
