"""OpRunner: engine calls off the GUI thread, results and errors back on it, the change feed."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from engine import Vault
from engine.changes import Change
from engine.dto import Counts
from engine.errors import EnvironmentProblem
from tests.ui.conftest import AddEvent
from ui.ops import OpRunner

pytestmark = pytest.mark.gui


@pytest.fixture
def runner(vault: Vault, bugs: list[tuple[str, str]]) -> Iterator[OpRunner]:
    op_runner = OpRunner(vault, report_bug=lambda summary, details: bugs.append((summary, details)))
    try:
        yield op_runner
    finally:
        op_runner.shutdown()


def _runner_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(("ui-read", "ui-write"))]


def test_read_runs_on_a_reader_thread_and_delivers_on_the_gui_thread(
    runner: OpRunner, qtbot: QtBot, qapp: QApplication
) -> None:
    seen: dict[str, Any] = {}

    def op(vault: Vault) -> Counts:
        seen["worker"] = threading.current_thread().name
        return vault.counts()

    def on_done(counts: Counts) -> None:
        seen["gui"] = QThread.currentThread() is qapp.thread()
        seen["counts"] = counts

    runner.read(op, on_done)
    qtbot.waitUntil(lambda: "counts" in seen, timeout=60_000)
    assert seen["worker"].startswith("ui-read")
    assert seen["gui"] is True
    assert seen["counts"] == Counts()


def test_writes_run_one_at_a_time_in_submission_order(runner: OpRunner, qtbot: QtBot) -> None:
    order: list[int] = []
    threads: set[str] = set()
    delivered: list[int] = []

    def make_op(n: int) -> Any:
        def op(_vault: Vault) -> int:
            threads.add(threading.current_thread().name)
            time.sleep(0.01 if n % 2 else 0)  # uneven durations would reorder a pool, not a serial writer
            order.append(n)
            return n

        return op

    for n in range(6):
        runner.write(make_op(n), delivered.append)
    qtbot.waitUntil(lambda: len(delivered) == 6, timeout=60_000)
    assert order == list(range(6))
    assert delivered == list(range(6))
    assert len(threads) == 1 and next(iter(threads)).startswith("ui-write")


def test_a_vault_error_becomes_the_user_error_signal(
    runner: OpRunner, qtbot: QtBot, bugs: list[tuple[str, str]]
) -> None:
    done: list[object] = []
    with qtbot.waitSignal(runner.user_error, timeout=60_000) as blocker:
        runner.write(lambda vault: vault.update_settings({"nonsense.key": 1}), done.append)
    message, _fix = blocker.args
    assert "nonsense.key" in message
    assert "unknown setting" in message
    assert done == []  # on_done is for success only
    assert bugs == []


def test_an_environment_problem_carries_its_fix(runner: OpRunner, qtbot: QtBot) -> None:
    def op(_vault: Vault) -> None:
        raise EnvironmentProblem("Ollama is not running.", fix="Start it with `ollama serve`.")

    with qtbot.waitSignal(runner.user_error, timeout=60_000) as blocker:
        runner.read(op)
    assert blocker.args == ["Ollama is not running.", "Start it with `ollama serve`."]


def test_a_bug_goes_to_the_bug_reporter_with_its_traceback(
    runner: OpRunner, qtbot: QtBot, bugs: list[tuple[str, str]]
) -> None:
    def broken(_vault: Vault) -> float:
        return 1 / 0

    with qtbot.waitSignal(runner.bug_reported, timeout=60_000) as blocker:
        runner.read(broken)
    assert blocker.args[0] == "ZeroDivisionError: division by zero"
    assert len(bugs) == 1
    summary, details = bugs[0]
    assert summary == "ZeroDivisionError: division by zero"
    assert "Traceback" in details and "in broken" in details


def test_an_exception_in_on_done_is_reported_not_raised(
    runner: OpRunner, qtbot: QtBot, bugs: list[tuple[str, str]]
) -> None:
    def on_done(_counts: Counts) -> None:
        raise KeyError("missing-column")

    runner.read(lambda vault: vault.counts(), on_done)
    qtbot.waitUntil(lambda: bool(bugs), timeout=60_000)
    assert bugs[0][0] == "KeyError: 'missing-column'"


def test_on_error_replaces_the_default_reporting(runner: OpRunner, qtbot: QtBot, bugs: list[tuple[str, str]]) -> None:
    errors: list[BaseException] = []
    runner.read(lambda _vault: [][1], on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=60_000)
    assert isinstance(errors[0], IndexError)
    assert bugs == []


def test_default_bug_dialog_is_non_modal_shows_the_traceback_and_is_not_repeated(vault: Vault, qtbot: QtBot) -> None:
    runner = OpRunner(vault)
    try:

        def broken(_vault: Vault) -> None:
            raise RuntimeError("the index went missing")

        for _ in range(2):
            with qtbot.waitSignal(runner.bug_reported, timeout=60_000):
                runner.read(broken)
        dialogs = runner.open_bug_reports
        assert len(dialogs) == 1  # the same bug twice is one dialog
        box = dialogs[0]
        assert isinstance(box, QMessageBox)
        assert box.isVisible()
        assert not box.isModal()
        assert "RuntimeError: the index went missing" in box.informativeText()
        assert "Traceback" in box.detailedText()
        box.close()
        qtbot.waitUntil(lambda: runner.open_bug_reports == (), timeout=60_000)
    finally:
        runner.shutdown()


def test_change_feed_arrives_as_a_signal_on_the_gui_thread(
    runner: OpRunner, qtbot: QtBot, qapp: QApplication, add_event: AddEvent
) -> None:
    threads: list[bool] = []
    runner.changes_arrived.connect(lambda _changes: threads.append(QThread.currentThread() is qapp.thread()))
    with qtbot.waitSignal(runner.changes_arrived, timeout=60_000) as blocker:
        event_id = add_event("conv-9")
    changes = blocker.args[0]
    assert [type(c) for c in changes] == [Change]
    assert changes[0].type == "event.created"
    assert changes[0].object_id == event_id
    assert changes[0].data == {"conversation_id": "conv-9"}
    assert threads == [True]


def test_shutdown_waits_for_running_work_then_stops_everything(vault: Vault, qtbot: QtBot, add_event: AddEvent) -> None:
    runner = OpRunner(vault)
    finished = threading.Event()
    started = threading.Event()

    def slow_write(_vault: Vault) -> None:
        started.set()
        time.sleep(0.3)
        finished.set()

    runner.write(slow_write)
    assert started.wait(5)
    assert _runner_threads()
    runner.shutdown()
    assert finished.is_set()  # shutdown waited for the running operation
    assert runner.is_shut_down
    assert _runner_threads() == []

    late: list[object] = []
    future = runner.read(lambda v: v.counts(), late.append)
    assert future.cancelled()
    with qtbot.assertNotEmitted(runner.changes_arrived, wait=300):
        add_event("after-shutdown")  # unsubscribed: no signal
    assert late == []
    runner.shutdown()  # idempotent
