"""The detail pane of one fact: its fields, its evidence in context, its history, and its actions.

The pane loads the evidence and the version chain itself (through the runner) whenever it is given
a fact; the actions are only *requested* (``action_requested``), because the Memories view runs them
for a whole selection as well.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.facts.model import Fact
from ui.format import local_time, percent, subject_label
from ui.models.rows import Column, RowTableModel
from ui.ops import OpRunner
from ui.widgets.evidence import Evidence, EvidenceView, load_evidence
from ui.widgets.flow_layout import FlowLayout
from ui.widgets.labels import heading_label, secondary_label, value_label

CURRENT = ("active", "contested")

# (action key, button text, tooltip)
ACTIONS = (
    ("edit", "Edit…", "Correct the value: a new version replaces this one; history is kept (Ctrl+Z takes it back)"),
    ("delete", "Delete", "Hide this memory everywhere (Ctrl+Z or Restore brings it back)"),
    ("restore", "Restore", "Bring a deleted memory back"),
    ("approve", "Approve", "Vouch for it: it becomes a trusted memory recall may use"),
    ("retract", "Retract", "It was wrong: retract it and bring back the version it replaced"),
    ("useful", "Useful", "Mark it useful: it rises in importance"),
    ("questionable", "Questionable", "Mark it questionable: it drops in importance and trust"),
    ("pin_hot", "Pin to hot", "Always put it in recalled context"),
    ("demote", "Demote", "Move it one tier down (hot → warm → cold) and keep it there"),
    ("unpin", "Unpin", "Let the usual rules choose its tier again"),
)


def available_actions(fact: Fact) -> set[str]:
    """The actions that make sense for ``fact`` now."""
    if fact.status == "deleted":
        return {"restore"}
    actions = {"delete", "useful", "questionable"}
    if fact.status in CURRENT:
        actions |= {"edit", "retract"}
        if fact.standing in ("quarantine", "candidate"):
            actions.add("approve")
        if not (fact.tier == "hot" and fact.tier_pinned):
            actions.add("pin_hot")
        if fact.tier != "cold":
            actions.add("demote")
    if fact.tier_pinned:
        actions.add("unpin")
    return actions


HISTORY_COLUMNS: tuple[Column[Fact], ...] = (
    Column("Recorded", lambda f: local_time(f.recorded_at)),
    Column("Value", lambda f: f.object_text, lambda f: f.statement),
    Column("Status", lambda f: f.status),
    Column("Source", lambda f: f.extractor if f.source_role != "manual" else "by hand"),
)


class FactDetail(QWidget):
    """Shows one fact.

    Signals:
        action_requested(str, int): the person clicked an action (key from :data:`ACTIONS`) for a
            fact id.
        fact_activated(int): a version in the history was double-clicked.
        event_activated(int): the link to the source turn was followed.
        span_activated(int): the link to the source document span was followed.
    """

    action_requested = Signal(str, int)
    fact_activated = Signal(int)
    event_activated = Signal(int)
    span_activated = Signal(int)

    def __init__(self, runner: OpRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._fact: Fact | None = None
        self._generation = 0
        self._evidence_for: int | None = None
        self.history = RowTableModel(HISTORY_COLUMNS, key=lambda f: f.id, parent=self)

        self.title = heading_label("No memory selected", scale=1.2)
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.subtitle = secondary_label("Select a memory to see where it came from.")
        self.buttons: dict[str, QPushButton] = {}
        actions = FlowLayout()
        for key, text, tip in ACTIONS:
            button = QPushButton(text)
            button.setToolTip(tip)
            button.clicked.connect(lambda _checked=False, k=key: self._request(k))
            self.buttons[key] = button
            actions.addWidget(button)

        self.fields: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for key, caption in (
            ("value", "Value"),
            ("subject", "About"),
            ("predicate", "Predicate"),
            ("trust", "Trust"),
            ("tier", "Tier"),
            ("status", "Status"),
            ("valid", "True in the world"),
            ("recorded", "Recorded"),
            ("source", "Source"),
            ("usage", "Use"),
        ):
            self.fields[key] = value_label("")
            form.addRow(caption, self.fields[key])

        self.evidence = EvidenceView()
        self.evidence.setMinimumHeight(120)
        self.evidence.event_activated.connect(self.event_activated)
        self.evidence.span_activated.connect(self.span_activated)
        self.history_view = QTableView()
        self.history_view.setModel(self.history)
        self.history_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.history_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.history_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.history_view.verticalHeader().hide()
        self.history_view.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.history_view.setAccessibleName("History")
        self.history_view.doubleClicked.connect(self._on_history_activated)

        content = QWidget()
        box = QVBoxLayout(content)
        box.setContentsMargins(0, 0, 8, 0)
        box.setSpacing(8)
        box.addWidget(self.title)
        box.addWidget(self.subtitle)
        box.addLayout(actions)
        self.form_holder = QWidget()
        self.form_holder.setLayout(form)
        form.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.form_holder)
        box.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.evidence, "Evidence")
        self.tabs.addTab(self.history_view, "History")
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 6, 0, 0)
        outer.setSpacing(12)
        outer.addWidget(scroll, 1)
        outer.addWidget(self.tabs, 1)
        self.show_fact(None)

    # -- public ------------------------------------------------------------------------------------
    @property
    def fact(self) -> Fact | None:
        """The fact shown."""
        return self._fact

    def show_fact(self, fact: Fact | None, *, reload_sources: bool = True) -> None:
        """Show ``fact`` (None: the empty state) and load its evidence and history."""
        previous = self._fact
        self._fact = fact
        if fact is None:
            self._generation += 1
            self._evidence_for = None
            self.title.setText("No memory selected")
            self.subtitle.setText("Select a memory to see where it came from and what changed.")
            for label in self.fields.values():
                label.setText("")
            for button in self.buttons.values():
                button.setVisible(False)
            self.form_holder.hide()
            self.tabs.hide()
            self.evidence.clear_evidence()
            self.history.set_rows([])
            self.tabs.setTabText(1, "History")
            return
        self.form_holder.show()
        self.tabs.show()
        self._fill(fact)
        same_fact = previous is not None and previous.id == fact.id
        if reload_sources or not same_fact:
            self._load_sources(fact)

    def loaded(self) -> bool:
        """True when the evidence and history of the fact shown have arrived."""
        return self._fact is not None and self._evidence_for == self._fact.id

    def update_if_shown(self, fact: Fact) -> None:
        """Refresh the fields when ``fact`` is the one shown (or one of its versions)."""
        if self._fact is not None and self._fact.id == fact.id:
            self.show_fact(fact)
        elif self.history.row_of(fact.id) is not None:
            self.history.replace(fact)

    # -- filling -----------------------------------------------------------------------------------
    def _fill(self, fact: Fact) -> None:
        self.title.setText(fact.statement)
        self.subtitle.setText(f"Memory {fact.id} · {fact.kind} · decays {fact.decay}")
        valid = " – ".join(part for part in (local_time(fact.valid_from), local_time(fact.valid_to)) if part)
        pinned = ", pinned" if fact.tier_pinned else ""
        texts = {
            "value": fact.object_text,
            "subject": subject_label(fact.subject),
            "predicate": fact.predicate,
            "trust": f"{fact.standing} · confidence {percent(fact.confidence)} · importance {percent(fact.importance)}",
            "tier": f"{fact.tier}{pinned}",
            "status": _status_text(fact),
            "valid": valid or "not stated",
            "recorded": f"{local_time(fact.recorded_at)} (updated {local_time(fact.updated_at)})",
            "source": _source_text(fact),
            "usage": f"recalled {fact.access_count}× · marked useful {fact.useful_count}× · "
            f"questionable {fact.questionable_count}×",
        }
        for key, text in texts.items():
            self.fields[key].setText(text)
        allowed = available_actions(fact)
        # Only what applies is shown: a deleted memory offers Restore and nothing else.
        for key, button in self.buttons.items():
            button.setVisible(key in allowed)

    def _load_sources(self, fact: Fact) -> None:
        self._generation += 1
        generation = self._generation
        if self._evidence_for != fact.id:
            self._evidence_for = None
            self.evidence.show_loading()  # a refresh of the same fact keeps the old text meanwhile
        fact_id = fact.id

        def load(vault: Vault) -> tuple[Evidence, list[Fact]]:
            return load_evidence(vault, fact), vault.facts.history(fact_id)

        self._runner.read(load, lambda result: self._sources_arrived(generation, result))

    def _sources_arrived(self, generation: int, result: tuple[Evidence, list[Fact]]) -> None:
        if generation != self._generation:
            return
        evidence, history = result
        self.evidence.show_evidence(evidence)
        self.tabs.setTabText(1, f"History ({len(history)})" if len(history) > 1 else "History")
        self._evidence_for = self._fact.id if self._fact is not None else None
        self.history.set_rows(history)
        if self._fact is not None:
            row = self.history.row_of(self._fact.id)
            if row is not None:
                self.history_view.selectRow(row)

    # -- events ------------------------------------------------------------------------------------
    def _request(self, key: str) -> None:
        if self._fact is not None:
            self.action_requested.emit(key, self._fact.id)

    def _on_history_activated(self, index: QModelIndex) -> None:
        fact = self.history.row_item(index.row())
        if isinstance(fact, Fact):
            self.fact_activated.emit(fact.id)


def _status_text(fact: Fact) -> str:
    if fact.status == "superseded" and fact.superseded_by is not None:
        return f"superseded by memory {fact.superseded_by} on {local_time(fact.superseded_at)}"
    return fact.status


def _source_text(fact: Fact) -> str:
    if fact.span_id is not None:
        how = "corrected by hand" if fact.extractor == "manual" else f"read by {fact.extractor}"
        return f"from a document; {how}"
    if fact.source_role == "manual" and fact.event_id is None:
        return "added by hand"
    who = {"user": "you said it", "assistant": "the assistant said it", "tool": "a tool said it"}
    origin = who.get(fact.source_role, fact.source_role)
    via = "by hand" if fact.extractor == "manual" else f"extracted by {fact.extractor}"
    return f"{origin}; {via}"
