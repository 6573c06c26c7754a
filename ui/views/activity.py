"""The Activity view: background jobs, failures to retry, the models in use, and recent warnings.

The numbers come from ``vault.jobs.stats()`` and ``vault.info()``.  They refresh on ``job.*`` changes and
new events (throttled) and, while jobs are waiting or running and the view is shown, every
:data:`POLL_INTERVAL_MS` as well, because a job finishing quietly announces nothing.  Warnings
(``job.warning``: a model was unavailable and the rule path was used, say) and failures
(``job.failed``) are collected from the change feed, starting with the vault's activity history
(:mod:`engine.activity`, kept across restarts); so are forgets with their receipts, imports, exports, backups and
the memory proxy's captures and warnings (``proxy.warning``: a chat forwarded without memory because recall or
recording failed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QItemSelection, Qt, QTimer
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from engine import Vault
from engine.activity import KIND_NAMES as WORK_NAMES, ActivityEntry, describe
from engine.changes import Change
from engine.dto import VaultInfo
from engine.jobs import JobInfo, JobStats
from engine.vectors.migration import VectorStatus
from ui.context import ViewContext
from ui.format import error_text, local_time, one_line, plural, vectors_text
from ui.models.rows import Column, RowTableModel
from ui.throttle import Throttle
from ui.widgets.labels import heading_label, secondary_label, value_label
from ui.widgets.tables import EmptyAware, simple_table

POLL_INTERVAL_MS = 1500
REFRESH_INTERVAL_MS = 400
MAX_WARNINGS = 200
KIND_NAMES = {
    "enrich": "Learning from chat turns",
    "summarize_episode": "Summarising episodes",
    "distill_document": "Summarising documents",
    "vectors.fill": "Re-embedding",
    **WORK_NAMES,
}


def kind_name(kind: str) -> str:
    """A job kind in words (unknown kinds as they are)."""
    return KIND_NAMES.get(kind, kind.replace("_", " ").capitalize())


@dataclass(frozen=True, slots=True)
class Notice:
    """One warning or failure reported on the change feed."""

    seq: int
    at: float
    kind: str
    level: str  # "warning", "failed" or "info" (a forget and what it did to the backups)
    text: str


def notices_from(changes: Sequence[Change]) -> list[Notice]:
    """The changes among ``changes`` that the activity history keeps (:data:`engine.activity.DESCRIBE`: warnings,
    parked jobs, forgets, imports, proxy captures …), as notices."""
    return [_notice(entry) for c in changes if (entry := describe(c)) is not None]


def _notice(entry: ActivityEntry) -> Notice:
    return Notice(entry.seq, entry.at.timestamp(), entry.kind, entry.level, entry.text)


@dataclass(frozen=True, slots=True)
class Machinery:
    """What the Models group shows: the vault's info, its vectors' state and the model's last error."""

    info: VaultInfo
    vectors: VectorStatus
    model: dict[str, Any]


def load_activity(vault: Vault) -> tuple[JobStats, Machinery]:
    """Queue depth, parked jobs and the machinery in use (reader pool)."""
    return vault.jobs.stats(), Machinery(vault.info(), vault.vector_status(), vault.model_status())


def load_history(vault: Vault) -> list[Notice]:
    """The newest entries of the vault's activity history (kept across restarts), and what the change feed still
    holds that the history has not written yet."""
    changes, _complete = vault.changes.since(0)
    kept = {n.seq: n for n in notices_from(changes)}
    kept.update((e.seq, _notice(e)) for e in vault.activity(limit=MAX_WARNINGS))
    return list(kept.values())


KIND_COLUMNS: tuple[Column[tuple[str, int]], ...] = (
    Column("Work", lambda k: kind_name(k[0]), lambda k: k[0]),
    Column("Waiting or running", lambda k: f"{k[1]:,}", align_right=True),
)
FAILURE_COLUMNS: tuple[Column[JobInfo], ...] = (
    Column("Job", lambda j: str(j.id), align_right=True),
    Column("Work", lambda j: kind_name(j.kind), lambda j: j.kind),
    Column("Tries", lambda j: f"{j.attempts}/{j.max_attempts}", align_right=True),
    Column("Error", lambda j: one_line(j.last_error or ""), lambda j: j.last_error or ""),
    Column("Last try", lambda j: local_time(j.updated_at)),
)
NOTICE_COLUMNS: tuple[Column[Notice], ...] = (
    Column("When", lambda n: local_time(n.at, seconds=True)),
    Column("Work", lambda n: kind_name(n.kind), lambda n: n.kind),
    Column("What happened", lambda n: one_line(n.text), lambda n: n.text),
)


class ActivityView(QWidget):
    """Jobs by kind, parked jobs with Retry, the models in use, and recent warnings."""

    def __init__(self, context: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = context.runner
        self._show_status = context.show_status
        self._loading = False
        self._stale = True
        self._backlog_loaded = False
        self.stats: JobStats | None = None
        self.info: VaultInfo | None = None
        self.kinds = RowTableModel(KIND_COLUMNS, key=lambda k: k[0], parent=self)
        self.failures = RowTableModel(FAILURE_COLUMNS, key=lambda j: j.id, parent=self)
        self.notices = RowTableModel(NOTICE_COLUMNS, key=lambda n: n.seq, parent=self)
        self._throttle = Throttle(REFRESH_INTERVAL_MS, self.refresh, self)
        self.poll_timer = QTimer(self)
        self.poll_timer.setInterval(POLL_INTERVAL_MS)
        self.poll_timer.timeout.connect(self.refresh)

        self.summary_label = value_label("Loading…")
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.kinds_view = simple_table(self.kinds, stretch=0, name="Background work", fit=(1,))
        self.failures_view = simple_table(self.failures, stretch=3, name="Failed jobs", fit=(0, 1, 2, 4), multi=True)
        self.failures_view.selectionModel().selectionChanged.connect(self._on_failure_selection)
        self.retry_button = QPushButton("Retry selected")
        self.retry_button.clicked.connect(self.retry_selected)
        self.retry_all_button = QPushButton("Retry all")
        self.retry_all_button.clicked.connect(self.retry_all)
        self.notices_view = simple_table(self.notices, stretch=2, name="Activity history", fit=(0, 1))
        self.model_labels = {
            "llm": value_label("…"),
            "llm_reason": secondary_label(""),
            "llm_error": secondary_label(""),
            "embedder": value_label("…"),
            "embedder_reason": secondary_label(""),
            "embedder_error": secondary_label(""),
            "migration": secondary_label(""),
            "vectors": value_label("…"),
            "warnings": secondary_label(""),
        }
        self.migration_bar = QProgressBar()
        self.migration_bar.setAccessibleName("Re-embedding progress")
        self.migration_bar.setVisible(False)
        self.machinery: Machinery | None = None

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        header = QHBoxLayout()
        header.addWidget(heading_label("Activity", scale=1.45))
        header.addWidget(self.summary_label, 1, Qt.AlignmentFlag.AlignBottom)
        header.addWidget(self.refresh_button)
        layout.addLayout(header)
        top = QHBoxLayout()
        top.addWidget(self._group("Background work", EmptyAware(self.kinds_view, "Nothing is waiting.")), 2)
        top.addWidget(self._models_group(), 3)
        layout.addLayout(top, 1)  # a few kinds of work and five lines about models: the lists below get the room
        failures = QGroupBox("Failed jobs")
        failures_box = QVBoxLayout(failures)
        failures_box.addWidget(
            secondary_label(
                "A job that keeps failing is parked with its error. Fix the cause (start Ollama, "
                "free disk space), then retry."
            )
        )
        failures_box.addWidget(EmptyAware(self.failures_view, "No failed jobs."), 1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.retry_button)
        buttons.addWidget(self.retry_all_button)
        failures_box.addLayout(buttons)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(failures)
        splitter.addWidget(
            self._group(
                "History: imports, forgets, warnings, captures",
                EmptyAware(
                    self.notices_view,
                    "No warnings since Cairn started. When a model is unavailable and the rule "
                    "path is used instead, it is noted here.",
                ),
            )
        )
        layout.addWidget(splitter, 3)
        context.runner.changes_arrived.connect(self._on_changes)
        self._update_buttons()

    def _group(self, title: str, widget: QWidget) -> QGroupBox:
        group = QGroupBox(title)
        box = QVBoxLayout(group)
        box.addWidget(widget)
        return group

    def _models_group(self) -> QGroupBox:
        group = QGroupBox("Models in use")
        form = QFormLayout(group)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Language model", self.model_labels["llm"])
        form.addRow("", self.model_labels["llm_reason"])
        form.addRow("", self.model_labels["llm_error"])
        form.addRow("Embedder", self.model_labels["embedder"])
        form.addRow("", self.model_labels["embedder_reason"])
        form.addRow("", self.model_labels["migration"])
        form.addRow("", self.migration_bar)
        form.addRow("", self.model_labels["embedder_error"])
        form.addRow("Vector index", self.model_labels["vectors"])
        form.addRow("", self.model_labels["warnings"])
        return group

    # -- loading -----------------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        """Catch up when shown; poll while work is pending."""
        super().showEvent(event)
        if not self._backlog_loaded:
            self._backlog_loaded = True
            self._runner.read(load_history, self._add_notices)
        if self._stale:
            self.refresh()
        self._update_polling()

    def hideEvent(self, event: QHideEvent) -> None:
        """A hidden view does not poll."""
        super().hideEvent(event)
        self.poll_timer.stop()

    def refresh(self) -> None:
        """Load the queue and the models again."""
        if self._loading:
            self._stale = True
            return
        self._loading = True
        self._stale = False
        self._runner.read(load_activity, self._arrived, on_error=self._failed)

    def _arrived(self, result: tuple[JobStats, Machinery]) -> None:
        self._loading = False
        stats, machinery = result
        info = machinery.info
        self.stats, self.info, self.machinery = stats, info, machinery
        vectors = machinery.vectors
        self.model_labels["llm_error"].setText(
            error_text(machinery.model.get("last_error"), machinery.model.get("last_error_at"))
        )
        self.model_labels["embedder_error"].setText(error_text(vectors.last_error, vectors.last_error_at))
        self.model_labels["migration"].setText(vectors_text(vectors))
        if vectors.migration is not None:
            self.migration_bar.setRange(0, max(1, vectors.migration.total))
            self.migration_bar.setValue(max(0, vectors.migration.total - vectors.remaining))
        self.migration_bar.setVisible(vectors.migration is not None)
        self.summary_label.setText(summary_text(stats))
        self.kinds.set_rows(sorted(stats.by_kind.items()))
        self.failures.set_rows(stats.failures)
        self.model_labels["llm"].setText(info.llm_engine)
        self.model_labels["llm_reason"].setText(info.llm_reason)
        self.model_labels["embedder"].setText(info.embedder)
        self.model_labels["embedder_reason"].setText(info.embedder_reason)
        self.model_labels["vectors"].setText(info.vector_backend)
        self.model_labels["warnings"].setText("\n".join(f"Note: {w}" for w in info.warnings))
        self._update_buttons()
        self._update_polling()
        if self._stale:
            self._throttle.trigger()

    def _failed(self, error: BaseException) -> None:
        self._loading = False
        self.poll_timer.stop()
        self._runner.report(error)

    def _update_polling(self) -> None:
        busy = self.stats is not None and (self.stats.queued + self.stats.running) > 0
        if busy and self.isVisible():
            if not self.poll_timer.isActive():
                self.poll_timer.start()
        else:
            self.poll_timer.stop()

    def _on_changes(self, changes: Sequence[Change]) -> None:
        self._add_notices(notices_from(changes))
        relevant = any(c.type.startswith(("job.", "event.created", "settings.")) for c in changes)
        if not relevant:
            return
        if self.isVisible():
            self._throttle.trigger()
        else:
            self._stale = True

    def _add_notices(self, notices: Sequence[Notice]) -> None:
        """Merge by ``seq``: the history loaded at first show and live changes may overlap, in any order."""
        merged = {n.seq: n for n in self.notices.rows()}
        fresh = [n for n in notices if n.seq not in merged]
        if not fresh:
            return
        merged.update((n.seq, n) for n in fresh)
        rows = sorted(merged.values(), key=lambda n: n.seq, reverse=True)
        self.notices.set_rows(rows[:MAX_WARNINGS])

    # -- retrying ----------------------------------------------------------------------------------
    def selected_job_ids(self) -> list[int]:
        """The ids of the selected parked jobs."""
        rows = sorted(i.row() for i in self.failures_view.selectionModel().selectedRows())
        return [self.failures.row_item(row).id for row in rows]

    def retry_selected(self) -> None:
        """Put the selected parked jobs back in the queue."""
        ids = self.selected_job_ids()
        if ids:
            self._retry(ids)

    def retry_all(self) -> None:
        """Put every parked job back in the queue."""
        self._retry(None)

    def _retry(self, ids: list[int] | None) -> None:
        self.retry_button.setEnabled(False)
        self.retry_all_button.setEnabled(False)
        self._runner.write(
            lambda vault: vault.jobs.retry(ids),
            self._retried,
            on_error=self._retry_failed,
        )

    def _retried(self, count: int) -> None:
        self._show_status(f"{plural(count, 'job')} back in the queue.")
        self.refresh()

    def _retry_failed(self, error: BaseException) -> None:
        self._update_buttons()
        self._runner.report(error)

    def _on_failure_selection(self, _new: QItemSelection, _old: QItemSelection) -> None:
        self._update_buttons()

    def _update_buttons(self) -> None:
        has_failures = self.failures.rowCount() > 0
        self.retry_all_button.setEnabled(has_failures)
        self.retry_button.setEnabled(has_failures and self.failures_view.selectionModel().hasSelection())


def summary_text(stats: JobStats) -> str:
    """``Idle`` or ``3 waiting · 1 running · 2 failed``."""
    parts = []
    if stats.queued:
        parts.append(f"{stats.queued:,} waiting")
    if stats.running:
        parts.append(f"{stats.running:,} running")
    if stats.parked:
        parts.append(f"{stats.parked:,} failed")
    return " · ".join(parts) if parts else "Idle: nothing waiting"
