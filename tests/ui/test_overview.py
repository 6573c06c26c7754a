"""The overview on a real vault: real counts, live refresh, the token, the health checks."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtWidgets import QLabel, QLineEdit
from pytestqt.qtbot import QtBot

from app.composition import build_main_window
from engine import Vault
from engine.changes import Change
from engine.doctor import run_doctor
from engine.dto import Finding
from engine.store.writer import Tx
from tests.ui.conftest import TOKEN, AddEvent
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views.overview import REFRESH_INTERVAL_MS, OverviewView, is_relevant
from ui.widgets.findings_table import FindingsModel, FindingsTable

pytestmark = pytest.mark.gui


def _overview(window: MainWindow) -> OverviewView:
    view = window.view("overview")
    assert isinstance(view, OverviewView)
    return view


def _shown(qtbot: QtBot, window: MainWindow, events: str) -> OverviewView:
    window.show()
    view = _overview(window)
    qtbot.waitUntil(lambda: view.count_labels["events"].text() == events, timeout=60_000)
    return view


def test_shows_the_real_counts_and_machinery(
    vault: Vault, add_event: AddEvent, composed: tuple[MainWindow, OpRunner], qtbot: QtBot
) -> None:
    for conversation in ("a", "a", "b"):
        add_event(conversation, f"message in {conversation}")
    window, _runner = composed
    view = _shown(qtbot, window, "3")
    counts = {key: label.text() for key, label in view.count_labels.items()}
    assert counts == {
        "events": "3",
        "facts": "0",
        "documents": "0",
        "conversations": "2",
        "subjects": "0",
        "open_conflicts": "0",
    }
    fields = view.field_labels
    assert fields["path"].text() == str(vault.paths.root)
    assert fields["llm"].text() == "simple"
    assert fields["llm_reason"].text()  # why this engine was chosen
    assert fields["embedder"].text() == vault.embedder.model_id
    assert fields["embedder_reason"].text()
    assert fields["vectors"].text().startswith("sqlite-vec")  # "(in-memory mirror)" once the mirror has loaded
    assert fields["queue"].text() == "Idle: no jobs waiting"
    assert f"schema {vault.store.schema_version}" in fields["versions"].text()


def test_counts_refresh_live_when_events_arrive(
    add_event: AddEvent, composed: tuple[MainWindow, OpRunner], qtbot: QtBot
) -> None:
    add_event("first")
    window, _runner = composed
    view = _shown(qtbot, window, "1")
    add_event("second")
    qtbot.waitUntil(lambda: view.count_labels["events"].text() == "2", timeout=60_000)
    assert view.count_labels["conversations"].text() == "2"


def test_a_burst_of_changes_ends_with_the_final_numbers(
    add_event: AddEvent, composed: tuple[MainWindow, OpRunner], qtbot: QtBot
) -> None:
    window, _runner = composed
    view = _shown(qtbot, window, "0")
    writer = threading.Thread(target=lambda: [add_event(f"c{n % 4}", f"m{n}") for n in range(25)])
    writer.start()
    qtbot.waitUntil(lambda: not writer.is_alive(), timeout=60_000)
    # The last refresh comes at most one throttle interval after the last change.
    qtbot.waitUntil(lambda: view.count_labels["events"].text() == "25", timeout=REFRESH_INTERVAL_MS + 3000)
    assert view.count_labels["conversations"].text() == "4"


def test_a_hidden_overview_waits_and_catches_up_when_shown(
    add_event: AddEvent, composed: tuple[MainWindow, OpRunner], qtbot: QtBot
) -> None:
    window, _runner = composed
    view = _shown(qtbot, window, "0")
    window.hide()
    add_event("while-hidden")
    qtbot.wait(REFRESH_INTERVAL_MS + 200)
    assert view.count_labels["events"].text() == "0"  # no query while nobody looks
    window.show()
    qtbot.waitUntil(lambda: view.count_labels["events"].text() == "1", timeout=60_000)


def test_refresh_button_reloads_changes_that_were_not_announced(
    vault: Vault, composed: tuple[MainWindow, OpRunner], qtbot: QtBot
) -> None:
    window, _runner = composed
    view = _shown(qtbot, window, "0")

    def silent_insert(tx: Tx) -> None:  # no tx.emit: the feed stays quiet
        event_id = tx.new_id("event")
        tx.execute(
            "INSERT INTO events(id, user_id, conversation_id, type, role, content, occurred_at, "
            "ingested_at, content_hash, source) VALUES (?, 'me', 'quiet', 'message', 'user', 'x', "
            "?, ?, ?, 'test')",
            (event_id, tx.now, tx.now, hashlib.sha256(b"quiet").hexdigest()),
        )

    vault.store.write(silent_insert)
    qtbot.wait(REFRESH_INTERVAL_MS + 200)
    assert view.count_labels["events"].text() == "0"
    view.refresh_button.click()
    qtbot.waitUntil(lambda: view.count_labels["events"].text() == "1", timeout=60_000)


@pytest.mark.parametrize(
    ("change_type", "relevant"),
    [
        ("event.created", True),
        ("memory.created", True),
        ("memory.superseded", True),
        ("document.ready", True),
        ("conflict.resolved", True),
        ("settings.changed", False),
        ("ingest.progress", False),
        ("episode.created", False),
    ],
)
def test_which_changes_refresh_the_overview(change_type: str, relevant: bool) -> None:
    assert is_relevant(Change(1, change_type, None, 0.0)) is relevant


def test_token_is_masked_until_shown_and_copy_puts_it_on_the_clipboard(
    composed: tuple[MainWindow, OpRunner], qtbot: QtBot
) -> None:
    window, _runner = composed
    view = _shown(qtbot, window, "0")
    panel = view.endpoint_panel
    assert panel.address_label.text() == "http://127.0.0.1:8642"
    assert panel.token_field.echoMode() == QLineEdit.EchoMode.Password
    assert TOKEN not in panel.token_field.displayText()
    assert not panel.token_visible

    panel.show_button.click()
    assert panel.token_field.displayText() == TOKEN
    assert panel.show_button.text() == "Hide"
    panel.show_button.click()
    assert TOKEN not in panel.token_field.displayText()

    QGuiApplication.clipboard().setText("something else")
    panel.copy_button.click()
    assert QGuiApplication.clipboard().text() == TOKEN
    assert window.statusBar().currentMessage() == "Endpoint token copied to the clipboard."


def test_an_endpoint_problem_is_shown_with_its_fix(vault: Vault, qtbot: QtBot) -> None:
    problem = "Port 8642 on 127.0.0.1 is already in use, so the endpoint cannot start."
    window, runner = build_main_window(
        vault,
        endpoint_address=None,
        token=TOKEN,
        endpoint_problem=problem,
        endpoint_fix="Stop the other program, or choose another port.",
    )
    qtbot.addWidget(window)
    try:
        panel = _overview(window).endpoint_panel
        assert panel.address_label.text() == problem
        fixes = [label.text() for label in panel.findChildren(QLabel) if label.text().startswith("Fix:")]
        assert fixes == ["Fix: Stop the other program, or choose another port."]
        assert window.endpoint_status.text() == "Endpoint not serving"
        assert panel.token_field.text() == TOKEN  # still shown: `cairn serve` uses the same token
    finally:
        window.close()
        runner.shutdown()


def test_health_checks_match_cairn_doctor(vault: Vault, composed: tuple[MainWindow, OpRunner], qtbot: QtBot) -> None:
    window, _runner = composed
    view = _shown(qtbot, window, "0")
    qtbot.waitUntil(lambda: view.findings.rowCount() > 0, timeout=60_000)
    expected = run_doctor(vault.paths.root, settings=vault.settings, vault=vault).findings
    model = view.findings
    assert [model.finding(row).check for row in range(model.rowCount())] == [f.check for f in expected]
    assert model.index(0, 0).data() == "python"
    assert model.index(0, 1).data() == "OK"
    assert model.index(0, 1).data(Qt.ItemDataRole.DecorationRole) is not None
    assert view.health_summary.text() != "Checking…"
    assert view.recheck_button.isEnabled()


def test_findings_model_words_status_and_shows_fixes(qtbot: QtBot) -> None:
    model = FindingsModel()
    table = FindingsTable(model)
    qtbot.addWidget(table)
    model.set_findings(
        [
            Finding("ollama", "warn", "not reachable", "Start Ollama with `ollama serve`."),
            Finding("sqlite-vec", "error", "cannot load", "make run", essential=True),
            Finding("python", "ok", "Python 3.11"),
        ]
    )
    assert model.rowCount() == 3 and model.columnCount() == 4
    assert [model.index(r, 1).data() for r in range(3)] == ["Warning", "Error (essential)", "OK"]
    assert model.index(0, 3).data() == "Start Ollama with `ollama serve`."
    assert model.index(1, 2).data(Qt.ItemDataRole.ToolTipRole) == "cannot load"
    assert not table.isColumnHidden(3)
    model.set_findings([Finding("python", "ok", "Python 3.11")])
    assert table.isColumnHidden(3)  # no fixes: no empty column


def test_findings_table_fits_its_rows_once_per_change(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    model = FindingsModel()
    table = FindingsTable(model)
    qtbot.addWidget(table)
    table.resize(600, 200)
    table.show()
    fits: list[int] = []
    measure = table.resizeRowsToContents
    monkeypatch.setattr(table, "resizeRowsToContents", lambda: (fits.append(1), measure()))
    long_fix = "Choose another port: CAIRN_ENDPOINT_PORT=NNNN or endpoint.port in settings.toml. " * 3
    model.set_findings([Finding("endpoint", "warn", "port 8642 is used by another program", long_fix)])
    assert table.fitting
    qtbot.waitUntil(lambda: not table.fitting, timeout=60_000)
    assert fits == [1]  # the column changes of the reset are fitted together
    rows = sum(table.rowHeight(row) for row in range(model.rowCount()))
    assert table.height() == table.horizontalHeader().height() + 2 * table.frameWidth() + rows
    assert table.rowHeight(0) > table.fontMetrics().height() * 2  # the long fix wraps


def test_screenshot_of_the_overview(
    add_event: AddEvent, composed: tuple[MainWindow, OpRunner], qtbot: QtBot, tmp_path: Path
) -> None:
    add_event("shot")
    window, _runner = composed
    view = _shown(qtbot, window, "1")
    qtbot.waitUntil(lambda: view.findings.rowCount() > 0, timeout=60_000)
    target = tmp_path / "overview.png"
    assert window.grab().save(str(target))
    image = QImage(str(target))
    assert (image.width(), image.height()) == (window.width(), window.height())
    sampled = {image.pixel(x, y) for x in range(0, image.width(), 37) for y in range(0, image.height(), 23)}
    assert len(sampled) > 5  # drawn content, not a blank pane
