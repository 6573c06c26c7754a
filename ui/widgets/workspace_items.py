"""The subject workspace's items in tables and text, and the small dialogs that write them.

Observations, understandings (with their revision history) and the facts two subjects share are shown through
:class:`~ui.models.rows.RowTableModel` columns defined here, so the People & topics view, the intersection dialog
and the workspace documents show them alike.

:class:`FormDialog` is the shape of every dialog here that writes something: Save sends the call to the runner's
writer, the dialog waits, and closes when it is done — or stays open with the engine's message (an empty summary, a
name too long) and everything typed, so a refusal loses nothing.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.errors import VaultError
from engine.subjects import Subject
from engine.workspace.model import Observation, TaggedFact, Understanding
from ui.format import local_time, one_line, subject_label
from ui.models.rows import Column
from ui.ops import OpRunner
from ui.widgets.labels import secondary_label

KIND_LABELS = {
    "single_subject": "Understanding",
    "relationship": "Relationship",
    "structural": "Names and structure",
    "soul": "Soul",
    "protocol": "Protocol",
    "orientation": "Orientation",
}
SUBJECT_KINDS = ("entity", "person", "project", "topic", "place", "organisation")


def kind_label(kind: str) -> str:
    """An understanding's kind in words."""
    return KIND_LABELS.get(kind, kind.replace("_", " "))


def subjects_text(names: Sequence[str]) -> str:
    """Subject names as the person reads them ("You" for the owner)."""
    return ", ".join(subject_label(n) for n in names)


def sources_text(ids: Sequence[int]) -> str:
    """Cited object ids: ``#3, #4, #5``."""
    return ", ".join(f"#{i}" for i in ids)


def split_tags(text: str) -> list[str]:
    """Tags typed as a comma-separated list."""
    return [t.strip() for t in text.split(",") if t.strip()]


def marks_text(item: Understanding | Observation) -> str:
    """``+2 / −1``: how often an item was marked useful and questionable (empty when never)."""
    if not (item.useful_count or item.questionable_count):
        return ""
    return f"+{item.useful_count} / −{item.questionable_count}"


def marks_tooltip(useful: int, questionable: int) -> str:
    """The marks in words."""
    return f"Marked useful {useful}×, questionable {questionable}×"


UNDERSTANDING_COLUMNS: tuple[Column[Understanding], ...] = (
    Column("Kind", lambda u: kind_label(u.kind)),
    Column("Summary", lambda u: one_line(u.summary, 140), lambda u: u.content),
    Column("About", lambda u: subjects_text(u.subjects)),
    Column("Sources", lambda u: f"{len(u.sources):,}", lambda u: sources_text(u.sources), align_right=True),
    Column("Marks", marks_text, lambda u: marks_tooltip(u.useful_count, u.questionable_count)),
    Column("Written", lambda u: local_time(u.created_at)),
)
OBSERVATION_COLUMNS: tuple[Column[Observation], ...] = (
    Column("When", lambda o: local_time(o.observed_at)),
    Column("Observation", lambda o: one_line(o.content, 160), lambda o: o.content),
    Column("About", lambda o: subjects_text(o.subjects)),
    Column("Kind", lambda o: o.kind),
    Column("Marks", marks_text, lambda o: marks_tooltip(o.useful_count, o.questionable_count)),
)
TAGGED_FACT_COLUMNS: tuple[Column[TaggedFact], ...] = (
    Column("Memory", lambda f: f.statement, lambda f: f.source_text),
    Column("Filed under", lambda f: subject_label(f.subject)),
)


@dataclass(frozen=True, slots=True)
class Version:
    """One understanding in its revision chain: its place (1 is the oldest) and whether it is the current one."""

    number: int
    understanding: Understanding

    @property
    def current(self) -> bool:
        """Not superseded: what readers see now."""
        return self.understanding.active


def versions(chain: Sequence[Understanding]) -> list[Version]:
    """A revision chain (oldest first) as numbered versions."""
    return [Version(n, u) for n, u in enumerate(chain, start=1)]


def version_state(version: Version) -> str:
    """``● current`` or what superseded it."""
    if version.current:
        return "● current"
    after = version.understanding.superseded_by
    return f"superseded by #{after}" if after is not None else version.understanding.status


HISTORY_COLUMNS: tuple[Column[Version], ...] = (
    Column("Version", lambda v: f"v{v.number}"),
    Column("Id", lambda v: f"#{v.understanding.id}"),
    Column("Written", lambda v: local_time(v.understanding.created_at)),
    Column("Summary", lambda v: one_line(v.understanding.summary, 120), lambda v: v.understanding.content),
    Column("State", version_state),
)


def understanding_html(u: Understanding) -> str:
    """An understanding in full: summary, text, what it cites and where it came from."""
    facts = [
        kind_label(u.kind),
        f"#{u.id}",
        f"written {local_time(u.created_at)}",
        f"by {u.source}",
        f"generation {u.generation}",
        f"marked useful {u.useful_count}×, questionable {u.questionable_count}×",
    ]
    if u.supersedes is not None:
        facts.append(f"revises #{u.supersedes}")
    if not u.active:
        facts.append(f"superseded by #{u.superseded_by}" if u.superseded_by is not None else u.status)
    cites = sources_text(u.sources) or "nothing"
    return (
        f"<p><b>{html.escape(u.summary)}</b></p>"
        f"<p style='white-space: pre-wrap'>{html.escape(u.content)}</p>"
        f"<p>Cites: {html.escape(cites)}</p>"
        f"<p><small>{html.escape(' · '.join(facts))}</small></p>"
    )


def error_label() -> QLabel:
    """A bold, selectable, word-wrapped label for what the engine refused (hidden until it says something)."""
    label = QLabel()
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    font = label.font()
    font.setWeight(QFont.Weight.DemiBold)
    label.setFont(font)
    label.hide()
    return label


def show_refusal(label: QLabel, message: str, fix: str = "") -> None:
    """Put the engine's ``message`` (and ``fix``) in ``label``, or hide it for an empty message."""
    if not message:
        label.clear()
        label.hide()
        return
    label.setText(f"Not saved: {message}" + (f" {fix}" if fix else ""))
    label.show()


class FormDialog(QDialog):
    """A dialog whose Save runs an engine call on the writer and closes only when it succeeded.

    Subclasses build their fields into :attr:`form` and implement :meth:`operation`.  A refusal
    (:class:`~engine.errors.VaultError`) stays in the dialog as :attr:`error_text`, with every field as typed;
    anything else is a bug, reported by the runner.

    Signals:
        saved(object): what the call returned (emitted before the dialog closes).
    """

    saved = Signal(object)

    def __init__(self, runner: OpRunner, title: str, save_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self._runner = runner
        self._busy = False
        self.form = QFormLayout()
        self.note = secondary_label("")
        self.note.hide()
        self.error = error_label()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.save_button.setText(save_text)
        self.buttons.accepted.connect(self.submit)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.note)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(self.fontMetrics().averageCharWidth() * 70)
        self.finished.connect(self._on_finished)

    def set_note(self, text: str) -> None:
        """An explanation under the fields."""
        self.note.setText(text)
        self.note.setVisible(bool(text))

    @property
    def busy(self) -> bool:
        """True while the call is on its way."""
        return self._busy

    @property
    def error_text(self) -> str:
        """What the engine refused, as shown (empty when nothing was)."""
        return self.error.text() if self.error.isVisibleTo(self) else ""

    def operation(self) -> Callable[[Vault], Any]:
        """The call to make, with the fields copied into plain values (runs on the GUI thread)."""
        raise NotImplementedError

    def submit(self) -> None:
        """Save: send the call to the writer (once at a time)."""
        if self._busy:
            return
        op = self.operation()
        self._set_busy(True)
        show_refusal(self.error, "")
        self._runner.write(op, self._succeeded, on_error=self._failed)

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.save_button.setEnabled(not busy)

    def _succeeded(self, result: object) -> None:
        self._set_busy(False)
        self.saved.emit(result)
        if self.isVisible():
            self.accept()
        else:  # closed while the call was on its way
            self.deleteLater()

    def _failed(self, error: BaseException) -> None:
        self._set_busy(False)
        if isinstance(error, VaultError) and self.isVisible():
            show_refusal(self.error, error.message, error.fix)
            return
        self._runner.report(error)
        if not self.isVisible():
            self.deleteLater()

    def _on_finished(self, _result: int) -> None:
        if not self._busy:
            self.deleteLater()


class NewSubjectDialog(FormDialog):
    """Asks for the name (and kind) of a new subject: ``vault.workspace.create_subjects``."""

    def __init__(self, runner: OpRunner, parent: QWidget | None = None) -> None:
        super().__init__(runner, "New subject", "Create", parent)
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("A person, project, place or topic")
        self.kind_combo = QComboBox()
        self.kind_combo.setEditable(True)
        self.kind_combo.addItems(SUBJECT_KINDS)
        self.form.addRow("Name", self.name_edit)
        self.form.addRow("Kind", self.kind_combo)
        self.set_note("A subject that exists already (by name or alias) is opened instead.")

    def operation(self) -> Callable[[Vault], tuple[list[Subject], list[str]]]:
        """``create_subjects([name], kind=kind)``."""
        name = self.name_edit.text()
        kind = self.kind_combo.currentText().strip() or "entity"
        return lambda vault: vault.workspace.create_subjects([name], kind=kind)


class RememberDialog(FormDialog):
    """Writes an observation about a subject (and others named): ``vault.workspace.remember``."""

    def __init__(self, runner: OpRunner, subject: Subject, parent: QWidget | None = None) -> None:
        super().__init__(runner, f"Remember about {subject_label(subject.name)}", "Remember", parent)
        self.subject = subject
        self.content_edit = QPlainTextEdit()
        self.content_edit.setPlaceholderText("What you noticed, in a sentence or two")
        self.content_edit.setTabChangesFocus(True)
        self.others_edit = QLineEdit()
        self.others_edit.setPlaceholderText("Other subjects it is about, separated by commas (optional)")
        self.form.addRow("Observation", self.content_edit)
        self.form.addRow("Also about", self.others_edit)
        self.set_note("Observations are evidence: they are never edited. Consolidation turns them into understandings.")

    def operation(self) -> Callable[[Vault], Any]:
        """``remember(content, [subject, *others])``."""
        content = self.content_edit.toPlainText()
        names = [self.subject.name, *split_tags(self.others_edit.text())]
        user_id = self.subject.user_id
        return lambda vault: vault.workspace.remember(content, names, user_id=user_id)


class ReviseDialog(FormDialog):
    """Revises an understanding: a new version supersedes it (``vault.workspace.update_understanding``)."""

    def __init__(self, runner: OpRunner, understanding: Understanding, parent: QWidget | None = None) -> None:
        super().__init__(runner, f"Revise {kind_label(understanding.kind).lower()} #{understanding.id}", "Save", parent)
        self.understanding = understanding
        self.summary_edit = QLineEdit(understanding.summary)
        self.content_edit = QPlainTextEdit(understanding.content)
        self.content_edit.setTabChangesFocus(True)
        self.form.addRow("Summary", self.summary_edit)
        self.form.addRow("Text", self.content_edit)
        self.set_note("The current version stays in the history; the new one keeps its sources.")

    def operation(self) -> Callable[[Vault], Understanding]:
        """``update_understanding(id, new_content=…, new_summary=…)``."""
        understanding_id = self.understanding.id
        content = self.content_edit.toPlainText()
        summary = self.summary_edit.text()
        return lambda vault: vault.workspace.update_understanding(
            understanding_id, new_content=content, new_summary=summary
        )
