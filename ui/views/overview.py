"""The Overview view: what the vault holds, the machinery in use, the endpoint, and its health.

Data comes from :meth:`engine.Vault.info` and ``cairn doctor``'s checks, both loaded on the runner's
reader pool. The counts refresh live when the change feed reports new events, memories, documents or
conflicts, throttled so a burst of ingests costs two queries rather than one per event.  A hidden
overview does not query at all: it only notes that it is out of date and catches up when shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.changes import Change
from engine.doctor import check_open_vault
from engine.dto import DoctorReport, VaultInfo
from ui.context import ViewContext
from ui.throttle import Throttle
from ui.widgets.endpoint_panel import EndpointPanel
from ui.widgets.findings_table import FindingsModel, FindingsTable
from ui.widgets.labels import heading_label, secondary_label, value_label

REFRESH_INTERVAL_MS = 500
RELEVANT_CHANGES = ("event.created", "memory.", "document.", "conflict.")

# (Counts field, caption): the order of the cards.
COUNT_CARDS = (
    ("events", "Events"),
    ("facts", "Memories"),
    ("documents", "Documents"),
    ("conversations", "Conversations"),
    ("subjects", "People & topics"),
    ("open_conflicts", "Open conflicts"),
)
CARD_COLUMNS = 3


def is_relevant(change: Change) -> bool:
    """True for changes that can move one of the overview's numbers."""
    return change.type.startswith(RELEVANT_CHANGES)


def load_doctor_report(vault: Vault) -> DoctorReport:
    """Run ``cairn doctor``'s checks on the open vault (a reader-pool op: it probes sockets)."""
    return check_open_vault(vault)


class OverviewView(QWidget):
    """The first view of the main window.

    Public labels (``count_labels``, ``field_labels``) are read by the tests; everything else is
    private.
    """

    def __init__(self, context: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = context.runner
        self._locale = QLocale()
        self._info_loading = False
        self._doctor_loading = False
        self._stale = True  # nothing shown yet
        self._doctor_loaded = False
        self._throttle = Throttle(REFRESH_INTERVAL_MS, self._load_info, self)
        self.count_labels: dict[str, QLabel] = {}
        self.field_labels: dict[str, QLabel] = {}
        self.endpoint_panel = EndpointPanel(context.endpoint, context.show_status)
        self.findings = FindingsModel(self)

        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(20, 16, 20, 20)
        layout.setSpacing(14)
        layout.addLayout(self._build_header())
        layout.addLayout(self._build_cards())
        columns = QHBoxLayout()
        columns.setSpacing(14)
        columns.addWidget(self._build_engine_group(), 1)
        columns.addWidget(self.endpoint_panel, 1)
        layout.addLayout(columns)
        layout.addWidget(self._build_health_group())
        layout.addStretch(1)

        scroll = QScrollArea()
        scroll.setObjectName("overviewScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

        context.runner.changes_arrived.connect(self._on_changes)

    # -- layout ------------------------------------------------------------------------------------
    def _build_header(self) -> QVBoxLayout:
        title_row = QHBoxLayout()
        title_row.addWidget(heading_label("Vault overview", scale=1.45))
        title_row.addStretch(1)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Load the numbers again")
        self.refresh_button.clicked.connect(self.refresh)
        title_row.addWidget(self.refresh_button)
        self.field_labels["path"] = value_label("Loading…")
        self.field_labels["versions"] = secondary_label("")
        header = QVBoxLayout()
        header.setSpacing(4)
        header.addLayout(title_row)
        header.addWidget(self.field_labels["path"])
        header.addWidget(self.field_labels["versions"])
        return header

    def _build_cards(self) -> QGridLayout:
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(12)
        for position, (field, caption) in enumerate(COUNT_CARDS):
            card = QFrame()
            card.setObjectName("countCard")
            card.setFrameShape(QFrame.Shape.StyledPanel)
            number = heading_label("–", scale=1.9)
            number.setAccessibleName(caption)
            box = QVBoxLayout(card)
            box.setContentsMargins(14, 10, 14, 10)
            box.setSpacing(0)
            box.addWidget(number)
            box.addWidget(secondary_label(caption))
            self.count_labels[field] = number
            grid.addWidget(card, position // CARD_COLUMNS, position % CARD_COLUMNS)
        return grid

    def _build_engine_group(self) -> QGroupBox:
        group = QGroupBox("Models and search")
        form = QFormLayout(group)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
        for key, caption in (("llm", "Language model"), ("embedder", "Embedder")):
            self.field_labels[key] = value_label("…")
            self.field_labels[f"{key}_reason"] = secondary_label("")
            form.addRow(caption, self.field_labels[key])
            form.addRow("", self.field_labels[f"{key}_reason"])
        self.field_labels["vectors"] = value_label("…")
        self.field_labels["queue"] = value_label("…")
        self.field_labels["warnings"] = secondary_label("")
        self.field_labels["warnings"].hide()
        form.addRow("Vector index", self.field_labels["vectors"])
        form.addRow("Background work", self.field_labels["queue"])
        form.addRow("", self.field_labels["warnings"])
        return group

    def _build_health_group(self) -> QGroupBox:
        group = QGroupBox("Health checks")
        self.health_summary = value_label("Checking…")
        self.recheck_button = QPushButton("Run checks again")
        self.recheck_button.clicked.connect(self.check_health)
        row = QHBoxLayout()
        row.addWidget(self.health_summary, 1)
        row.addWidget(self.recheck_button, 0, Qt.AlignmentFlag.AlignTop)
        box = QVBoxLayout(group)
        box.addLayout(row)
        box.addWidget(secondary_label("The same checks as `cairn doctor`, with the command that fixes each problem."))
        box.addWidget(FindingsTable(self.findings))
        return group

    # -- loading -----------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Reload the numbers now (the Refresh button)."""
        self._throttle.cancel()
        self._load_info()

    def check_health(self) -> None:
        """Run the health checks again."""
        if self._doctor_loading:
            return
        self._doctor_loading = True
        self.recheck_button.setEnabled(False)
        self.health_summary.setText("Checking…")
        self._runner.read(load_doctor_report, self._show_report, on_error=self._on_doctor_failed)

    def _load_info(self) -> None:
        if self._info_loading:
            self._stale = True  # one query at a time; the newest state is fetched when this one returns
            return
        self._info_loading = True
        self._stale = False
        self._runner.read(Vault.info, self._show_info, on_error=self._on_info_failed)

    def _on_changes(self, changes: Sequence[Change]) -> None:
        if any(c.type == "settings.changed" and "endpoint.token" in c.data.get("keys", ()) for c in changes):
            self._runner.read(Vault.endpoint_token, self.endpoint_panel.set_token)
        if not any(is_relevant(change) for change in changes):
            return
        if self.isVisible():
            self._throttle.trigger()
        else:
            self._stale = True

    def showEvent(self, event: QShowEvent) -> None:
        """Catch up on first show and after changes that arrived while hidden."""
        super().showEvent(event)
        if self._stale:
            self._throttle.trigger()
        if not self._doctor_loaded:
            self._doctor_loaded = True
            self.check_health()

    # -- showing (GUI thread) ----------------------------------------------------------------------
    def _show_info(self, info: VaultInfo) -> None:
        self._info_loading = False
        self.field_labels["path"].setText(info.path)
        self.field_labels["versions"].setText(
            f"Cairn {info.app_version} · schema {info.schema_version} · "
            f"SQLite {info.sqlite_version} · sqlite-vec {info.vec_version}"
        )
        for field, label in self.count_labels.items():
            label.setText(self._locale.toString(int(getattr(info.counts, field))))
        self.field_labels["llm"].setText(info.llm_engine)
        self.field_labels["llm_reason"].setText(info.llm_reason)
        self.field_labels["embedder"].setText(info.embedder)
        self.field_labels["embedder_reason"].setText(info.embedder_reason)
        self.field_labels["vectors"].setText(info.vector_backend)
        self.field_labels["queue"].setText(_queue_text(info.queue_depth, self._locale))
        warnings = self.field_labels["warnings"]
        warnings.setText("\n".join(f"Note: {w}" for w in info.warnings))
        warnings.setVisible(bool(info.warnings))
        if self._stale and self.isVisible():
            self._throttle.trigger()

    def _on_info_failed(self, error: BaseException) -> None:
        self._info_loading = False
        self._runner.report(error)

    def _show_report(self, report: DoctorReport) -> None:
        self._doctor_loading = False
        self.recheck_button.setEnabled(True)
        self.findings.set_findings(report.findings)
        self.health_summary.setText(_health_summary(report))

    def _on_doctor_failed(self, error: BaseException) -> None:
        self._doctor_loading = False
        self.recheck_button.setEnabled(True)
        self.health_summary.setText("The checks could not run.")
        self._runner.report(error)


def _queue_text(depth: int, locale: QLocale) -> str:
    if depth == 0:
        return "Idle: no jobs waiting"
    noun = "job" if depth == 1 else "jobs"
    return f"{locale.toString(depth)} {noun} waiting or running"


def _health_summary(report: DoctorReport) -> str:
    errors = sum(1 for f in report.findings if f.status == "error")
    warnings = sum(1 for f in report.findings if f.status == "warn")
    if not report.ok:
        return "Something essential is missing: see the fixes below."
    if errors or warnings:
        parts = [f"{n} {word}{'' if n == 1 else 's'}" for n, word in ((errors, "error"), (warnings, "warning")) if n]
        return f"Cairn works; {' and '.join(parts)} to look at."
    return f"All {len(report.findings)} checks passed."
