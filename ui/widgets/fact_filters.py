"""The Memories view's filter bar: text search, subject, predicate, tier, standing and status."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QWidget

from engine.facts.api import STANDINGS, STATUSES, TIERS, FactFilter
from ui.format import subject_label, subject_name

TYPING_DELAY_MS = 250
ANY = "Any"
CURRENT = "Current"
ALL = "All"


class FactFilterBar(QWidget):
    """Emits :attr:`filter_changed` with a new :class:`FactFilter` whenever a control changes.

    Typing waits :data:`TYPING_DELAY_MS` after the last key, so a word is one query, not one per
    letter.
    """

    filter_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search memories…")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search memories")
        self.subject = _editable_combo("Anyone", "Who the memory is about")
        self.predicate = _editable_combo("Any predicate", "What kind of memory")
        self.tier = _combo([ANY, *TIERS], "Tier: hot is always recalled, cold is archived")
        self.standing = _combo([ANY, *STANDINGS], "Trust band (quarantine is hidden from recall)")
        self.status = _combo([CURRENT, *STATUSES, ALL], "Current = active and contested; All includes history")
        self._typing = QTimer(self)
        self._typing.setSingleShot(True)
        self._typing.setInterval(TYPING_DELAY_MS)
        self._typing.timeout.connect(self._emit)
        self.search.textChanged.connect(self._typing.start)
        for combo in (self.subject, self.predicate):
            combo_edit(combo).textChanged.connect(self._typing.start)
            combo.activated.connect(self._emit)
        for combo in (self.tier, self.standing, self.status):
            combo.currentIndexChanged.connect(self._emit)

        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        row.addWidget(self.search, 3)
        row.addWidget(self.subject, 2)
        row.addWidget(self.predicate, 2)
        for caption, combo in (
            ("Tier", self.tier),
            ("Standing", self.standing),
            ("Status", self.status),
        ):
            label = QLabel(caption)
            label.setBuddy(combo)
            row.addWidget(label)
            row.addWidget(combo)

    def set_choices(self, subjects: Sequence[str], predicates: Sequence[str]) -> None:
        """Fill the subject and predicate lists (the typed text is kept)."""
        for combo, items in (
            (self.subject, [subject_label(s) for s in subjects]),
            (self.predicate, list(predicates)),
        ):
            text = combo.currentText()
            for widget in (combo, combo_edit(combo)):
                widget.blockSignals(True)
            combo.clear()
            combo.addItems(items)
            combo.setCurrentIndex(-1)
            combo.setEditText(text)
            for widget in (combo, combo_edit(combo)):
                widget.blockSignals(False)

    def current_filter(self) -> FactFilter:
        """The filter the controls describe."""
        status_text = self.status.currentText()
        status: str | tuple[str, ...] | None
        if status_text == CURRENT:
            status = None
        elif status_text == ALL:
            status = STATUSES
        else:
            status = status_text
        query = self.search.text().strip()
        return FactFilter(
            subject=subject_name(self.subject.currentText()) or None,
            predicate=self.predicate.currentText().strip() or None,
            tier=_chosen(self.tier),
            standing=_chosen(self.standing),
            status=status,
            q=query if any(ch.isalnum() for ch in query) else None,
        )

    def clear(self) -> None:
        """Back to every current memory (one signal)."""
        widgets: tuple[QWidget, ...] = (
            self.search,
            self.subject,
            combo_edit(self.subject),
            self.predicate,
            combo_edit(self.predicate),
            self.tier,
            self.standing,
            self.status,
        )
        for widget in widgets:
            widget.blockSignals(True)
        self.search.clear()
        self.subject.setEditText("")
        self.predicate.setEditText("")
        for combo in (self.tier, self.standing, self.status):
            combo.setCurrentIndex(0)
        for widget in widgets:
            widget.blockSignals(False)
        self._typing.stop()
        self._emit()

    def is_default(self) -> bool:
        """True when no control narrows the list."""
        return self.current_filter() == FactFilter()

    def apply_now(self) -> None:
        """Emit the filter at once (instead of after the typing delay)."""
        self._typing.stop()
        self._emit()

    def _emit(self) -> None:
        self._typing.stop()
        self.filter_changed.emit(self.current_filter())


def combo_edit(combo: QComboBox) -> QLineEdit:
    """The line edit of an editable combo box."""
    edit = combo.lineEdit()
    assert edit is not None, "the combo box is not editable"
    return edit


def _combo(items: Sequence[str], tooltip: str) -> QComboBox:
    combo = QComboBox()
    combo.addItems(list(items))
    combo.setToolTip(tooltip)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    return combo


def _editable_combo(placeholder: str, tooltip: str) -> QComboBox:
    combo = QComboBox()
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    combo_edit(combo).setPlaceholderText(placeholder)
    combo_edit(combo).setClearButtonEnabled(True)
    combo.setToolTip(tooltip)
    combo.setMinimumContentsLength(10)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    completer = combo.completer()
    if completer is not None:
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
    return combo


def _chosen(combo: QComboBox) -> str | None:
    text = combo.currentText()
    return None if text == ANY else text
