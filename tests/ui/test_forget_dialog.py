"""File → Forget in the real window: choose a conversation by its title, preview the counts, confirm, forget; the
receipt is shown and kept in Activity; the other scopes preview what they hold; changing the choice clears the
preview, so the button only ever forgets what was previewed."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pytestqt.qtbot import QtBot

from engine import Vault
from engine.conversations import set_title
from engine.events import EventIn
from ui.forget_dialog import ForgetDialog, counts_text
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views.activity import ActivityView

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]


def chats(vault: Vault) -> None:
    vault.events.ingest(
        [
            EventIn(conversation_id="c-move", content="I moved to Lisbon.", occurred_at="2024-05-01T10:00:00Z"),
            EventIn(conversation_id="c-move", content="I work as a nurse.", occurred_at="2024-05-01T10:01:00Z"),
            EventIn(conversation_id="c-other", content="I like green tea.", occurred_at="2024-05-02T10:00:00Z"),
        ]
    )
    vault.store.write(lambda tx: set_title(tx, "default", "c-move", "Moving to Lisbon", "test"))
    assert vault.jobs.wait_idle(60)


def test_forget_a_conversation_chosen_by_title_with_preview_confirmation_and_receipt(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    chats(vault)
    window, _runner = window_for(vault)
    window.menu_actions["forget"].trigger()
    dialog = window.last_forget
    assert isinstance(dialog, ForgetDialog)
    qtbot.waitUntil(lambda: dialog.conversation.count() == 2, timeout=60_000)
    titles = [dialog.conversation.itemText(i) for i in range(dialog.conversation.count())]
    assert any(t.startswith("Moving to Lisbon — 2 turns") for t in titles)
    dialog.conversation.setCurrentIndex(dialog.conversation.findData("c-move"))
    assert not dialog.forget_button.isEnabled() and not dialog.confirm.isEnabled()

    with qtbot.waitSignal(dialog.previewed, timeout=60_000) as previewed:
        dialog.preview_button.click()
    preview = previewed.args[0]
    assert preview.dry_run and preview.deleted_counts["events"] == 2 and preview.deleted_counts["facts"] >= 2
    assert dialog.preview_label.text() == f"This would forget {counts_text(preview.deleted_counts)}."
    assert vault.counts().events == 3  # a preview forgets nothing
    assert not dialog.forget_button.isEnabled()  # not before the confirmation
    dialog.confirm.setChecked(True)
    assert dialog.forget_button.isEnabled()

    with qtbot.waitSignal(dialog.forgotten, timeout=60_000) as forgotten:
        dialog.forget_button.click()
    receipt = forgotten.args[0]
    assert not receipt.dry_run and receipt.deleted_counts == preview.deleted_counts
    assert f"receipt {receipt.receipt_id}" in dialog.preview_label.text()
    assert vault.counts().events == 1
    qtbot.waitUntil(lambda: dialog.conversation.count() == 1, timeout=60_000)  # the list follows

    window.show_view("activity")
    activity = window.view("activity")
    assert isinstance(activity, ActivityView)
    qtbot.waitUntil(
        lambda: any(f"receipt {receipt.receipt_id}" in n.text for n in activity.notices.rows()), timeout=60_000
    )
    vault.activity.flush()
    assert [e.object_id for e in vault.activity(kind="forget")] == [receipt.receipt_id]


def test_changing_the_choice_clears_the_preview_and_each_scope_counts_its_own(
    vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    chats(vault)
    window, _runner = window_for(vault)
    dialog = window.forget_dialog("conversation", "c-other")
    qtbot.waitUntil(lambda: dialog.conversation.currentData() == "c-other", timeout=60_000)
    with qtbot.waitSignal(dialog.previewed, timeout=60_000) as previewed:
        dialog.preview_button.click()
    assert previewed.args[0].deleted_counts["events"] == 1
    dialog.confirm.setChecked(True)
    dialog.conversation.setCurrentIndex(dialog.conversation.findData("c-move"))
    assert dialog.preview is None and not dialog.confirm.isChecked() and not dialog.forget_button.isEnabled()

    dialog.choose("user", "default")
    with qtbot.waitSignal(dialog.previewed, timeout=60_000) as previewed:
        dialog.preview_button.click()
    assert previewed.args[0].deleted_counts["events"] == 3

    dialog.choose("project")
    assert not dialog.preview_button.isEnabled()  # no project named yet
    dialog.project.setText("no-such-project")
    with qtbot.waitSignal(dialog.previewed, timeout=60_000) as previewed:
        dialog.preview_button.click()
    assert counts_text(previewed.args[0].deleted_counts) == "nothing"
    assert vault.counts().events == 3
