"""Activity: queue depth, parked jobs and Retry, the models in use, warnings from the feed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from engine import Settings, Vault
from engine.events import EventIn
from engine.jobs import enqueue
from tests.fakes.ollama import FakeOllama
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views.activity import ActivityView, kind_name

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def _open(window_for: WindowFor, vault: Vault, qtbot: QtBot) -> tuple[MainWindow, ActivityView]:
    window, _runner = window_for(vault)
    window.show()
    window.show_view("activity")
    view = window.view("activity")
    assert isinstance(view, ActivityView)
    qtbot.waitUntil(lambda: view.stats is not None, timeout=60_000)
    return window, view


def _park_a_broken_job(vault: Vault) -> int:
    """A job whose payload the enricher cannot read: it fails on its only attempt and is parked."""
    job_id = vault.store.write(lambda tx: enqueue(tx, "enrich", {"event_id": "not-a-number"}, max_attempts=1))
    return int(job_id)


@pytest.fixture
def idle_vault(tmp_path: Path, offline_settings: Settings) -> Iterator[Vault]:
    """A vault whose job workers do not run: what is queued stays queued."""
    vault = Vault.open(tmp_path / "idle", settings=offline_settings, start_workers=False)
    try:
        yield vault
    finally:
        vault.close()


def test_a_failing_job_is_listed_with_its_error_and_retry_runs_it_again(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    window, view = _open(window_for, vault, qtbot)
    assert view.summary_label.text() == "Idle: nothing waiting"
    assert view.model_labels["llm"].text() == "simple"
    assert view.model_labels["embedder"].text() == vault.embedder.model_id
    job_id = _park_a_broken_job(vault)
    qtbot.waitUntil(lambda: view.failures.rowCount() == 1, timeout=60_000)
    failure = view.failures.row_item(0)
    assert failure.id == job_id and failure.kind == "enrich"
    assert failure.last_error is not None and failure.last_error.startswith("ValueError")
    assert view.failures.data(view.failures.index(0, 1)) == kind_name("enrich")
    assert view.summary_label.text() == "1 failed"
    qtbot.waitUntil(lambda: view.notices.rowCount() == 1, timeout=60_000)
    notice = view.notices.row_item(0)
    assert notice.level == "failed" and "parked after 1 attempts: ValueError" in notice.text
    assert view.retry_all_button.isEnabled() and not view.retry_button.isEnabled()

    view.failures_view.selectRow(0)
    assert view.retry_button.isEnabled()
    view.retry_button.click()
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "1 job back in the queue.", timeout=60_000)
    # it runs again and fails again: a second notice for the same job
    qtbot.waitUntil(lambda: view.notices.rowCount() == 2, timeout=60_000)
    assert {n.text.split(":")[0] for n in view.notices.rows()} == {"parked after 1 attempts"}


def test_retry_puts_parked_jobs_back_in_the_queue_and_the_view_polls_while_work_waits(
    idle_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    job_id = _park_a_broken_job(idle_vault)
    idle_vault.store.write(
        lambda tx: tx.execute(
            "UPDATE jobs SET status = 'parked', last_error = 'RuntimeError: disk full' WHERE id = ?",
            (job_id,),
        )
    )
    _window, view = _open(window_for, idle_vault, qtbot)
    assert view.failures.rowCount() == 1
    assert view.failures.row_item(0).last_error == "RuntimeError: disk full"
    assert not view.poll_timer.isActive()  # nothing waiting: no polling
    view.retry_all()
    qtbot.waitUntil(lambda: view.failures.rowCount() == 0, timeout=60_000)
    assert idle_vault.jobs.stats().queued == 1 and idle_vault.jobs.stats().parked == 0
    assert view.summary_label.text() == "1 waiting"
    assert [view.kinds.data(view.kinds.index(0, c)) for c in (0, 1)] == [
        "Learning from chat turns",
        "1",
    ]
    assert view.poll_timer.isActive()  # work is waiting: keep the numbers fresh
    window = view.window()
    assert isinstance(window, MainWindow)
    window.show_view("overview")
    assert not view.poll_timer.isActive()  # a hidden view does not poll


@pytest.fixture
def model_vault(tmp_path: Path, fake_ollama: FakeOllama) -> Iterator[Vault]:
    """A vault using a (fake) Ollama model for extraction."""
    settings = Settings().updated(
        {
            "llm.provider": "ollama",
            "llm.ollama_host": fake_ollama.url,
            "embedder.provider": "hashing",
        }
    )
    vault = Vault.open(tmp_path / "model", settings=settings)
    try:
        yield vault
    finally:
        vault.close()


def test_a_model_that_goes_away_shows_up_as_a_warning(
    model_vault: Vault, fake_ollama: FakeOllama, window_for: WindowFor, qtbot: QtBot
) -> None:
    _window, view = _open(window_for, model_vault, qtbot)
    assert view.model_labels["llm"].text() == "ollama:llama3.2"
    fake_ollama.stop()
    model_vault.events.ingest(EventIn(conversation_id="c", content="I live in Lisbon."))
    qtbot.waitUntil(lambda: view.notices.rowCount() >= 1, timeout=60_000)
    notice = view.notices.row_item(0)
    assert notice.level == "warning"
    assert notice.text.startswith("model unavailable, used the rule path")
    assert view.notices.data(view.notices.index(0, 1)) == "Learning from chat turns"
    assert model_vault.jobs.wait_idle(120)
    assert [f.object_text for f in model_vault.facts()] == ["Lisbon"]  # the rules still learned


def test_a_re_embedding_shows_its_progress_in_activity_and_settings(
    tmp_path: Path, offline_settings: Settings, window_for: WindowFor, qtbot: QtBot
) -> None:
    with Vault.open(tmp_path / "m", settings=offline_settings) as first:
        first.events.ingest(
            [EventIn(conversation_id="c", content=t) for t in ("I live in Hanoi.", "I work as a nurse.")]
        )
        assert first.jobs.wait_idle(120)
        vectors = first.vector_status()
        total = int(first.store.scalar("SELECT COUNT(*) FROM embeddings") or 0)
        assert vectors.migration is None and total >= 4
    changed = offline_settings.updated({"embedder.hashing_dim": 256})
    vault = Vault.open(tmp_path / "m", settings=changed, start_workers=False)  # the re-embedding waits
    try:
        window, view = _open(window_for, vault, qtbot)
        qtbot.waitUntil(lambda: view.machinery is not None, timeout=60_000)
        assert view.migration_bar.isVisible() and view.migration_bar.maximum() == total
        assert view.migration_bar.value() == 0
        text = view.model_labels["migration"].text()
        assert "Re-embedding with hashing-v1-256: 0 of" in text and "hashing-v1-384" in text
        window.show_view("settings")
        settings_view = window.view("settings")
        qtbot.waitUntil(lambda: getattr(settings_view, "loaded", False), timeout=60_000)
        panel = settings_view.in_use  # type: ignore[attr-defined]
        assert panel.embedder.text() == "hashing-v1-256 (256 dimensions)"
        assert panel.progress.isVisibleTo(panel) and "0 of" in panel.embedder_note.text()
        assert panel.llm.text() == "simple"
    finally:
        vault.close()


def test_a_forget_that_replaced_the_backups_says_so(vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    from engine.forget import ForgetScope

    _window, view = _open(window_for, vault, qtbot)
    vault.events.ingest(EventIn(conversation_id="secret", content="I live in Lisbon."))
    assert vault.jobs.wait_idle(120)
    vault.backups.now()
    receipt = vault.forget(ForgetScope(conversation_id="secret"))
    qtbot.waitUntil(lambda: any(n.kind == "forget" for n in view.notices.rows()), timeout=60_000)
    (notice,) = [n for n in view.notices.rows() if n.kind == "forget"]
    assert notice.level == "info" and f"receipt {receipt.receipt_id}" in notice.text
    assert "Every backup was deleted (1 file)" in notice.text and "A fresh backup" in notice.text
    assert view.notices.data(view.notices.index(0, 1)) == "Forgetting"


def test_a_chat_the_memory_proxy_forwarded_without_memory_shows_up_as_a_warning(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    from engine.api.proxy.memory import ProxyMemory

    _window, view = _open(window_for, vault, qtbot)
    ProxyMemory(lambda: vault).report("recall", RuntimeError("private words"))
    qtbot.waitUntil(lambda: any(n.kind == "proxy" for n in view.notices.rows()), timeout=60_000)
    (notice,) = [n for n in view.notices.rows() if n.kind == "proxy"]
    assert notice.level == "warning"
    assert notice.text == "recall failed (RuntimeError); the chat was forwarded without memory"
    row = view.notices.rows().index(notice)
    assert view.notices.data(view.notices.index(row, 1)) == "Memory proxy"


def test_the_history_is_kept_across_restarts(
    tmp_path: Path, offline_settings: Settings, window_for: WindowFor, qtbot: QtBot
) -> None:
    from engine.forget import ForgetScope

    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(
        '{"conversation_id": "c1", "role": "user", "content": "My cat Zorblatt likes tuna.", '
        '"occurred_at": "2024-03-01T10:00:00Z"}\n',
        encoding="utf-8",
    )
    from app.plugins import build_plugin_manager

    plugins = build_plugin_manager(load_entry_points=False)
    with Vault.open(tmp_path / "v", settings=offline_settings, plugins=plugins) as first:
        first.conversations.import_summary(transcript)
        first.changes.emit("job.warning", kind="enrich", warnings=["the model was unavailable: rule path used"])
        receipt = first.forget(ForgetScope(conversation_id="c1"))
    with Vault.open(tmp_path / "v", settings=offline_settings) as again:
        _window, view = _open(window_for, again, qtbot)
        qtbot.waitUntil(lambda: len(view.notices.rows()) >= 3, timeout=60_000)
        texts = {n.kind: n.text for n in view.notices.rows()}
    assert texts["import"] == "imported 1 conversation (1 new turn) from a jsonl file"
    assert texts["enrich"] == "the model was unavailable: rule path used"
    assert f"receipt {receipt.receipt_id}" in texts["forget"]
    assert all("Zorblatt" not in n.text and "chat.jsonl" not in n.text for n in view.notices.rows())
