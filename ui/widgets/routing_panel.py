"""How a recall was routed (DESIGN §5 step 5): mode, predicates, subjects, channels, strategy, time."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from engine.recall.types import ChannelReport, RecallResult, Routing
from ui.format import local_time
from ui.models.rows import Column, RowTableModel
from ui.widgets.labels import heading_label, secondary_label, value_label
from ui.widgets.tables import simple_table

ChannelRow = tuple[str, ChannelReport]

CHANNEL_COLUMNS: tuple[Column[ChannelRow], ...] = (
    Column("Channel", lambda c: c[0]),
    Column("Ran", lambda c: "yes" if c[1].ran else "no", lambda c: c[1].note),
    Column("Hits", lambda c: f"{c[1].hits:,}", align_right=True),
    Column("ms", lambda c: f"{c[1].ms:.1f}", align_right=True),
    Column("Note", lambda c: c[1].note, lambda c: c[1].note),
)
FIELDS = (
    ("mode", "Mode"),
    ("strategy", "Strategy"),
    ("predicates", "Predicates"),
    ("subjects", "Subjects"),
    ("temporal", "Time range"),
    ("queries", "Queries used"),
    ("engine", "Engine"),
    ("degraded", "Degraded"),
    ("notes", "Notes"),
)
MODE_WORDS = {
    "broad": "broad (a profile or summary)",
    "direct": "direct (a specific fact)",
    "indirect": "indirect (advice or planning)",
}


def _listed(items: tuple[str, ...]) -> str:
    return ", ".join(items) if items else "none"


def routing_values(routing: Routing) -> dict[str, str]:
    """The routing's fields as the panel shows them, keyed like :data:`FIELDS`."""
    window = routing.temporal_range
    temporal = (
        f"{local_time(window.start)} – {local_time(window.end)} (“{window.expression}”)"
        if window is not None
        else "none"
    )
    return {
        "mode": MODE_WORDS.get(routing.mode, routing.mode),
        "strategy": routing.strategy,
        "predicates": _listed(routing.predicates),
        "subjects": _listed(routing.subjects),
        "temporal": temporal,
        "queries": " | ".join(routing.used_queries) or "none",
        "engine": routing.engine,
        "degraded": "yes" if routing.degraded else "no",
        "notes": "; ".join(routing.notes) or "none",
    }


class RoutingPanel(QWidget):
    """The routing fields, the channels table and the stage timings of one recall."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for key, title in FIELDS:
            label = value_label("–")
            label.setAccessibleName(title)
            self.values[key] = label
            form.addRow(title, label)
        self.channels = RowTableModel(CHANNEL_COLUMNS, key=lambda c: c[0], parent=self)
        self.channel_table = simple_table(self.channels, stretch=4, name="Channels", fit=(0, 1, 2, 3))
        rows = self.channel_table.verticalHeader()
        rows.setDefaultSectionSize(self.channel_table.fontMetrics().height() + 6)
        self.timings = secondary_label("")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(heading_label("Routing", scale=1.0))
        layout.addLayout(form)
        layout.addWidget(heading_label("Channels", scale=1.0))
        layout.addWidget(self.channel_table, 1)
        layout.addWidget(self.timings)

    def show_result(self, result: RecallResult | None) -> None:
        """Show ``result``'s routing (None: clear)."""
        if result is None:
            for label in self.values.values():
                label.setText("–")
            self.channels.set_rows([])
            self.timings.setText("")
            return
        for key, text in routing_values(result.routing).items():
            self.values[key].setText(text)
        self.channels.set_rows(sorted(result.routing.channels.items()))
        self.timings.setText("Time: " + " · ".join(f"{stage} {ms:.1f} ms" for stage, ms in result.timings_ms.items()))
