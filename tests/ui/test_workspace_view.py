"""People & topics as the subject workspace: summary and tags, understandings with history, revisions and marks,
observations, the neighbourhood as overlapping circles, the consolidation report and the workspace documents."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import QPointF, Qt
from pytestqt.qtbot import QtBot

from engine import Vault
from ui.main_window import MainWindow
from ui.ops import OpRunner
from ui.views.subjects import SubjectsView
from ui.widgets.consolidation_panel import NEEDS_SYNTHESIS, NEEDS_UNDERSTANDING
from ui.widgets.tables import select_only_row
from ui.widgets.venn import VennWidget, lens_area, venn_layout

pytestmark = pytest.mark.gui

WindowFor = Callable[[Vault], tuple[MainWindow, OpRunner]]

SHARED = ("Anna and Bob hiked in the Alps.", "Anna lent Bob her tent.", "Bob cooked dinner for Anna.")
GYM = "Anna met Carla at the gym."


@pytest.fixture
def ws_vault(vault: Vault) -> Vault:
    """Anna shares three observations with Bob and one with Carla."""
    for text in SHARED:
        vault.workspace.remember(text, ["Anna", "Bob"])
    vault.workspace.remember(GYM, ["Anna", "Carla"])
    return vault


def _open(window_for: WindowFor, vault: Vault, qtbot: QtBot, name: str = "Anna") -> SubjectsView:
    window, _runner = window_for(vault)
    window.show()
    window.show_view("subjects")
    view = window.view("subjects")
    assert isinstance(view, SubjectsView)
    qtbot.waitUntil(lambda: view.model.rowCount() > 0 and view.detail is not None, timeout=60_000)
    if view.detail is None or view.detail.subject.name != name:
        view.show_subject(vault.subjects.find(name).id)
        qtbot.waitUntil(lambda: view.detail is not None and view.detail.subject.name == name, timeout=60_000)
    return view


def test_the_summary_and_tags_are_saved_and_shown_and_a_refusal_keeps_what_was_typed(
    ws_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    view = _open(window_for, ws_vault, qtbot)
    assert not view.save_profile_button.isEnabled()  # nothing edited yet
    view.summary_edit.setPlainText("  A climbing friend from Lyon.  ")
    view.tags_edit.setText("friend, climbing, ")
    assert view.save_profile_button.isEnabled()
    qtbot.mouseClick(view.save_profile_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "A climbing friend from Lyon." in view.about_label.text(), timeout=60_000)
    assert "tags: friend, climbing" in view.about_label.text()
    stored = ws_vault.subjects.find("Anna")
    assert stored.summary == "A climbing friend from Lyon." and stored.tags == ("friend", "climbing")
    assert view.summary_edit.toPlainText() == "A climbing friend from Lyon."  # as stored
    assert view.tags_edit.text() == "friend, climbing"
    assert not view.save_profile_button.isEnabled()

    too_long = "x" * 300
    view.tags_edit.setText(too_long)
    qtbot.mouseClick(view.save_profile_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.profile_error.isVisibleTo(view), timeout=60_000)
    assert view.profile_error.text().startswith("Not saved: tags:")
    assert view.tags_edit.text() == too_long  # nothing lost
    assert ws_vault.subjects.find("Anna").tags == ("friend", "climbing")


def test_an_understanding_is_shown_with_its_sources_and_its_history_after_a_revision(
    ws_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    gym = ws_vault.workspace.search_observations("gym")[0]
    first = ws_vault.workspace.create_understanding(
        "Anna climbs and goes to the gym.", summary="Anna keeps fit", subject_names=["Anna"], sources=[gym.id]
    )
    view = _open(window_for, ws_vault, qtbot)
    view.tabs.setCurrentIndex(view.understandings_tab)
    pane = view.understandings
    qtbot.waitUntil(lambda: pane.model.rowCount() == 1, timeout=60_000)
    assert view.tabs.tabText(view.understandings_tab) == "Understanding (1)"
    chosen = pane.selected()
    assert chosen is not None and chosen.id == first.id
    text = pane.text.toPlainText()
    assert "Anna keeps fit" in text and "Anna climbs and goes to the gym." in text and f"Cites: #{gym.id}" in text

    qtbot.mouseClick(pane.history_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(pane.history()) == 1, timeout=60_000)

    dialog = pane.open_revise_dialog()
    assert dialog is not None and dialog.content_edit.toPlainText() == "Anna climbs and goes to the gym."
    dialog.summary_edit.setText("   ")
    dialog.content_edit.setPlainText("Anna climbs, hikes in the Alps and goes to the gym.")
    dialog.submit()
    qtbot.waitUntil(lambda: dialog.error_text != "", timeout=60_000)
    assert "new_summary" in dialog.error_text and dialog.isVisible()
    assert dialog.content_edit.toPlainText() == "Anna climbs, hikes in the Alps and goes to the gym."

    dialog.summary_edit.setText("Anna keeps fit outdoors")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(pane.history()) == 2, timeout=60_000)
    old, new = pane.history()
    assert old.understanding.id == first.id and not old.current
    assert new.current and new.understanding.supersedes == first.id
    assert old.understanding.superseded_by == new.understanding.id
    assert pane.history_model.data(pane.history_model.index(1, 4)) == "● current"
    assert pane.history_model.data(pane.history_model.index(0, 4)) == f"superseded by #{new.understanding.id}"
    qtbot.waitUntil(lambda: (u := pane.selected()) is not None and u.id == new.understanding.id, timeout=60_000)
    assert pane.model.rowCount() == 1  # only the current version is active
    assert "Anna keeps fit outdoors" in pane.text.toPlainText()
    assert f"Cites: #{gym.id}" in pane.text.toPlainText()  # the revision keeps its sources


def test_marks_increase_the_counts(ws_vault: Vault, window_for: WindowFor, qtbot: QtBot) -> None:
    understanding = ws_vault.workspace.create_understanding("Bob cooks.", summary="Bob cooks", subject_names=["Bob"])
    view = _open(window_for, ws_vault, qtbot, "Bob")
    view.tabs.setCurrentIndex(view.understandings_tab)
    pane = view.understandings
    qtbot.waitUntil(lambda: pane.selected() is not None, timeout=60_000)

    def counts() -> tuple[int, int]:
        row = pane.model.row_of(understanding.id)
        assert row is not None
        item = pane.model.row_item(row)
        return item.useful_count, item.questionable_count

    assert counts() == (0, 0)
    qtbot.mouseClick(pane.useful_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: counts() == (1, 0), timeout=60_000)
    qtbot.mouseClick(pane.useful_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: counts() == (2, 0), timeout=60_000)
    qtbot.mouseClick(pane.questionable_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: counts() == (2, 1), timeout=60_000)
    row = pane.model.row_of(understanding.id)
    assert row is not None
    assert pane.model.data(pane.model.index(row, 4)) == "+2 / −1"
    stored = ws_vault.workspace.understanding(understanding.id)
    assert (stored.useful_count, stored.questionable_count) == (2, 1)
    assert "marked useful 2×, questionable 1×" in pane.text.toPlainText()


def test_the_neighbourhood_is_drawn_as_overlaps_sized_by_what_is_shared(
    ws_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    view = _open(window_for, ws_vault, qtbot)
    view.tabs.setCurrentIndex(view.overlaps_tab)
    venn = view.venn
    qtbot.waitUntil(lambda: venn.isVisible() and venn.neighbour_names() == ["Bob", "Carla"], timeout=60_000)
    assert view.tabs.tabText(view.overlaps_tab) == "Overlaps (2)"
    lobes = {lobe.name: lobe for lobe in venn.lobes()}
    assert set(lobes) == {"Bob", "Carla"} and set(venn.overlap_regions()) == {"Bob", "Carla"}
    assert (lobes["Bob"].shared, lobes["Carla"].shared) == (3, 1)
    assert lobes["Bob"].overlap_area > lobes["Carla"].overlap_area > 0
    regions = venn.overlap_regions()
    assert regions["Bob"].width() * regions["Bob"].height() > regions["Carla"].width() * regions["Carla"].height()
    for name, lobe in lobes.items():
        assert venn.rect().contains(lobe.overlap_centre.toPoint())
        assert lobe.overlap.contains(lobe.overlap_centre)
        assert venn.hit_test(lobe.overlap_centre) == name
    assert venn.hit_test(QPointF(1, 1)) is None

    carla = lobes["Carla"]
    qtbot.mouseClick(venn, Qt.MouseButton.LeftButton, pos=carla.overlap_centre.toPoint())
    qtbot.waitUntil(
        lambda: view.intersection_dialog is not None and view.intersection_dialog.isVisible(), timeout=60_000
    )
    dialog = view.intersection_dialog
    assert dialog is not None and dialog.intersection is not None
    assert {dialog.intersection.subject_a, dialog.intersection.subject_b} == {"Anna", "Carla"}
    assert [o.content for o in dialog.observations_model.rows()] == [GYM]
    assert dialog.counts_label.text().startswith("1 observation")

    bob = lobes["Bob"]
    qtbot.mouseClick(venn, Qt.MouseButton.LeftButton, pos=bob.overlap_centre.toPoint())
    qtbot.waitUntil(lambda: dialog.observations_model.rowCount() == 3, timeout=60_000)
    assert {o.content for o in dialog.observations_model.rows()} == set(SHARED)
    assert dialog.windowTitle() == "Anna & Bob"
    dialog.close()


def test_the_layout_is_deterministic_and_overlaps_grow_with_what_is_shared(qtbot: QtBot) -> None:
    centre, radius, placed = venn_layout(400, 300, [5, 3, 1, 1])
    again = venn_layout(400, 300, [5, 3, 1, 1])
    assert (centre, radius, placed) == again
    areas = [
        lens_area(radius, small, ((where.x() - centre.x()) ** 2 + (where.y() - centre.y()) ** 2) ** 0.5)
        for where, small in placed
    ]
    assert areas[0] > areas[1] > areas[2] == pytest.approx(areas[3])
    assert placed[0][0].x() == pytest.approx(centre.x()) and placed[0][0].y() < centre.y()  # the largest on top
    widget = VennWidget()
    qtbot.addWidget(widget)
    widget.resize(400, 300)
    assert widget.lobes() == () and widget.hit_test(QPointF(200, 150)) is None


def test_the_consolidation_report_opens_its_rows_and_consolidate_now_writes_understandings(
    ws_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    view = _open(window_for, ws_vault, qtbot, "Carla")
    assert view.understandings.model.rowCount() == 0
    view.pages.setCurrentIndex(view.consolidation_page)
    panel = view.consolidation
    qtbot.waitUntil(lambda: any(r.section == NEEDS_SYNTHESIS for r in panel.rows()), timeout=60_000)
    pair = next(r for r in panel.rows() if r.section == NEEDS_SYNTHESIS)
    assert pair.pair == ("Anna", "Bob") and pair.item == "Anna & Bob" and "3 shared items" in pair.why
    assert {r.subject for r in panel.rows() if r.section == NEEDS_UNDERSTANDING} == {"Anna", "Bob"}
    assert panel.summary_label.text().startswith("Generation 0 · 3 subjects")

    select_only_row(panel.table, panel.model.row_of(pair.key) or 0)
    assert panel.open_pair_button.isEnabled()
    qtbot.mouseClick(panel.open_pair_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: view.intersection_dialog is not None and view.intersection_dialog.isVisible(), timeout=60_000
    )
    assert view.intersection_dialog is not None
    assert view.intersection_dialog.observations_model.rowCount() == 3
    view.intersection_dialog.close()

    bob = next(r for r in panel.rows() if r.section == NEEDS_UNDERSTANDING and r.subject == "Bob")
    select_only_row(panel.table, panel.model.row_of(bob.key) or 0)
    qtbot.mouseClick(panel.open_subject_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.detail is not None and view.detail.subject.name == "Bob", timeout=60_000)
    assert view.pages.currentIndex() == view.subjects_page

    view.pages.setCurrentIndex(view.consolidation_page)
    qtbot.mouseClick(panel.consolidate_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.last_pass is not None, timeout=60_000)
    text = panel.result_label.text()
    assert text.startswith("Generation 1: wrote understandings of ") and "relationship Anna & Bob" in text
    qtbot.waitUntil(
        lambda: panel.state is not None and panel.state.report.generation == 1 and not panel.rows(), timeout=60_000
    )

    view.pages.setCurrentIndex(view.subjects_page)
    qtbot.waitUntil(
        lambda: {u.kind for u in view.understandings.model.rows()} == {"single_subject", "relationship"},
        timeout=60_000,
    )
    written = next(u for u in view.understandings.model.rows() if u.kind == "single_subject")
    assert written.source == "consolidation" and written.subjects == ("Bob",) and written.sources
    view.tabs.setCurrentIndex(view.understandings_tab)
    assert view.understandings.select(written.id)
    assert "Bob cooked dinner for Anna." in view.understandings.text.toPlainText()


def test_new_subjects_and_observations_are_written_and_the_detail_follows_the_change_feed(
    ws_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    view = _open(window_for, ws_vault, qtbot)
    empty = view.open_new_subject_dialog()
    empty.submit()
    qtbot.waitUntil(lambda: empty.error_text != "", timeout=60_000)
    assert "must not be empty" in empty.error_text and empty.isVisible()
    empty.reject()

    dialog = view.open_new_subject_dialog()
    dialog.name_edit.setText("Dora")
    dialog.kind_combo.setCurrentText("person")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.detail is not None and view.detail.subject.name == "Dora", timeout=60_000)
    assert view.detail is not None and view.detail.subject.kind == "person"
    assert view.observations_model.rowCount() == 0

    remember = view.open_remember_dialog()
    assert remember is not None
    remember.content_edit.setPlainText("Dora plays the cello with Anna.")
    remember.others_edit.setText("Anna")
    remember.submit()
    qtbot.waitUntil(lambda: view.observations_model.rowCount() == 1, timeout=60_000)
    note = view.observations_model.row_item(0)
    assert note.content == "Dora plays the cello with Anna." and note.subjects == ("Anna", "Dora")
    assert view.tabs.tabText(view.observations_tab) == "Notes (1)"

    ws_vault.workspace.remember("Dora tours Japan in spring.", ["Dora"])  # from elsewhere: a client
    qtbot.waitUntil(lambda: view.observations_model.rowCount() == 2, timeout=60_000)
    assert view.observations_model.row_item(0).content == "Dora tours Japan in spring."
    qtbot.waitUntil(lambda: view.venn.neighbour_names() == ["Anna"], timeout=60_000)


def test_the_soul_saved_twice_shows_the_newer_text_and_supersedes_the_older(
    ws_vault: Vault, window_for: WindowFor, qtbot: QtBot
) -> None:
    view = _open(window_for, ws_vault, qtbot)
    dialog = view.open_documents_dialog()
    qtbot.waitUntil(lambda: dialog.loaded, timeout=60_000)
    soul = dialog.editor("soul")
    assert soul.state_label.text() == "Not written yet." and soul.content_edit.toPlainText() == ""

    soul.content_edit.setPlainText("Remember what matters to the person.")
    qtbot.mouseClick(soul.save_button, Qt.MouseButton.LeftButton)  # no summary
    qtbot.waitUntil(lambda: soul.error_text != "", timeout=60_000)
    assert "summary: must not be empty" in soul.error_text
    assert soul.content_edit.toPlainText() == "Remember what matters to the person."

    soul.summary_edit.setText("purpose")
    qtbot.mouseClick(soul.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(soul.version_rows()) == 1, timeout=60_000)
    assert soul.error_text == ""
    first = soul.version_rows()[0].understanding

    soul.content_edit.setPlainText("Remember what matters to the person, and why.")
    soul.summary_edit.setText("purpose and reasons")
    qtbot.mouseClick(soul.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(soul.version_rows()) == 2, timeout=60_000)
    old, new = soul.version_rows()
    assert old.understanding.id == first.id and not old.current
    assert old.understanding.superseded_by == new.understanding.id and new.current
    current = dialog.documents["soul"].current
    assert current is not None and current.content == "Remember what matters to the person, and why."
    assert soul.content_edit.toPlainText() == "Remember what matters to the person, and why."
    assert soul.state_label.text().startswith(f"Current: #{new.understanding.id}")
    assert ws_vault.workspace.understanding(first.id).superseded_by == new.understanding.id
    assert [u.kind for u in ws_vault.workspace.get_understandings()] == ["soul"]
    assert dialog.editor("protocol").state_label.text() == "Not written yet."

    ws_vault.workspace.create_understanding("Cite evidence.", summary="rules", kind="protocol")  # from a client
    qtbot.waitUntil(lambda: dialog.editor("protocol").content_edit.toPlainText() == "Cite evidence.", timeout=60_000)
    dialog.close()
