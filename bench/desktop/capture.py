"""Screenshots of every view of a main window, each with something meaningful chosen in it.

Used by ``python -m bench.screenshots`` (which builds the demo vault and opens it as the app does) and
usable on any vault.  :func:`capture_views` walks :data:`ui.views.VIEWS` in order; for each view a recipe
of :class:`Recipes` selects something (a memory with its evidence, the open conflict, a person, a turn with
the memories it produced, the richest section of a PDF, an Ask query, running jobs, the settings) and
returns the check that it has been drawn; then the window is grabbed to ``NN-<view>.png``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEventLoop, QSettings, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from engine import Vault
from engine.facts.model import Fact
from ui.garbage import MainThreadGarbageCollector
from ui.main_window import MainWindow
from ui.views import VIEWS
from ui.views.activity import ActivityView
from ui.views.ask import AskView
from ui.views.conflicts import ConflictsView
from ui.views.conversations import ConversationsView
from ui.views.documents import DocumentsView
from ui.views.memories import MemoriesView
from ui.views.overview import OverviewView
from ui.views.settings import SettingsView
from ui.views.subjects import SubjectsView

READY_TIMEOUT_S = 30.0
SETTLE_MS = 400
SMALL_LIMIT = 200_000
PREFERRED_PREDICATES = ("plans_to", "working_on", "works_as", "lost", "met")


@dataclass(frozen=True, slots=True)
class Scene:
    """What the recipes show: whose memories, which question, and more work to start for Activity."""

    person: str = "Jon"
    conversation: str = "locomo:30"
    question: str = "What business is Jon starting, and why?"
    more_conversations: Path | None = None


def pump(condition: Callable[[], bool], timeout_s: float = READY_TIMEOUT_S) -> bool:
    """Run the Qt event loop until ``condition()`` holds or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if condition():
                return True
        except (AttributeError, IndexError, StopIteration):
            pass  # not there yet
        if time.monotonic() > deadline:
            return False
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 30)


def settle(ms: int = SETTLE_MS) -> None:
    """Let the last results paint."""
    end = time.monotonic() + ms / 1000
    pump(lambda: time.monotonic() >= end, ms / 1000 + 1)


@contextmanager
def offscreen_session(state_dir: Path) -> Iterator[QApplication]:
    """A QApplication whose UI state (QSettings) lives in ``state_dir``, with garbage collected on the GUI thread."""
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        QSettings.setPath(QSettings.Format.IniFormat, scope, str(state_dir))
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    collector = MainThreadGarbageCollector()
    collector.start()
    try:
        yield app
    finally:
        collector.stop()


class Recipes:
    """One method per view key: select something, return the check that it has been drawn."""

    def __init__(self, window: MainWindow, vault: Vault, scene: Scene) -> None:
        self.window = window
        self.vault = vault
        self.scene = scene
        self.fact = self._pick_fact()

    def _pick_fact(self) -> Fact | None:
        """A memory about the scene's person with a quote long enough to show its evidence well."""
        facts = self.vault.facts(subject=self.scene.person, limit=300) or self.vault.facts(limit=300)
        good = [f for f in facts if f.event_id is not None and 40 <= len(f.source_text or "") <= 200]
        preferred = [f for f in good if f.predicate in PREFERRED_PREDICATES]
        chosen = preferred or good or facts
        return chosen[0] if chosen else None

    def prepare(self, key: str) -> Callable[[], bool]:
        """Select something in the view ``key``."""
        step = getattr(self, f"_{key}", None)
        if step is None:
            return lambda: True
        prepared: Callable[[], bool] = step(self.window.view(key))
        return prepared

    def _overview(self, view: OverviewView) -> Callable[[], bool]:
        return lambda: view.count_labels["events"].text() not in ("–", "") and view.health_summary.text() != "Checking…"

    def _memories(self, view: MemoriesView) -> Callable[[], bool]:
        fact = self.fact
        if fact is None:
            return lambda: view.model.loaded
        view.show_fact(fact.id)
        return lambda: (
            view.detail.fact is not None
            and view.detail.fact.id == fact.id
            and view.detail.loaded()
            and not view.model.is_loading()
        )

    def _conflicts(self, view: ConflictsView) -> Callable[[], bool]:
        return lambda: (
            view.model.rowCount() == 0
            or (view.side_a.evidence.highlighted_text != "" and view.side_b.evidence.highlighted_text != "")
        )

    def _subjects(self, view: SubjectsView) -> Callable[[], bool]:
        person = next((s for s in self.vault.subjects(limit=100) if s.name == self.scene.person), None)
        if person is None:
            return lambda: view.detail is not None
        view.show_subject(person.id)
        return lambda: view.detail is not None and view.detail.subject.id == person.id

    def _conversations(self, view: ConversationsView) -> Callable[[], bool]:
        fact = self.fact
        if fact is None or fact.event_id is None:
            return lambda: view.turns.rowCount() > 0
        event_id = fact.event_id
        view.show_event(event_id)
        return lambda: (
            (turn := view.current_turn()) is not None and turn.id == event_id and view.turn_facts.rowCount() > 0
        )

    def _documents(self, view: DocumentsView) -> Callable[[], bool]:
        documents = self.vault.documents()
        chosen = next((d for d in documents if d.page_count), documents[0] if documents else None)
        if chosen is None:
            return lambda: view.model.is_loaded
        view.select_document(chosen.id)
        pane = view.document_pane

        def drawn() -> bool:
            if not pane.loaded() or pane.tree is None or not pane.tree.sections:
                return pane.loaded()
            # the section with the most text shows a summary and several spans with their pages
            richest = max(pane.tree.sections, key=lambda s: sum(len(span.text) for span in s.spans))
            target = pane.sections.index_of_item(richest.id)
            if pane.section_view.currentIndex() != target:
                pane.section_view.setCurrentIndex(target)
                pane.section_view.scrollTo(target)
            return "Section summary" in pane.detail.toPlainText()

        return drawn

    def _ask(self, view: AskView) -> Callable[[], bool]:
        pump(lambda: view.choices_loaded)
        view.ask(self.scene.question, self.scene.conversation)
        return lambda: view.result is not None and not view.running

    def _activity(self, view: ActivityView) -> Callable[[], bool]:
        more = self.scene.more_conversations
        if more is None:
            return lambda: view.stats is not None and view.info is not None
        # Real work to look at: another conversation arrives, and its turns queue for enrichment.
        self.window.runner.write(lambda vault: vault.conversations.import_summary(more))
        return lambda: view.stats is not None and view.stats.queued + view.stats.running > 0 and view.info is not None

    def _settings(self, view: SettingsView) -> Callable[[], bool]:
        return lambda: bool(view.loaded)


def save_small(image: QImage, path: Path, limit: int = SMALL_LIMIT) -> int:
    """``image`` in 256 colours (a UI has few, so text stays sharp) at a quarter of the size; returns bytes.

    Raises:
        OSError: the file could not be written, or came out larger than ``limit``.
    """
    small = image.convertToFormat(QImage.Format.Format_Indexed8, Qt.ImageConversionFlag.ThresholdDither)
    if not small.save(str(path), "PNG", 0):  # type: ignore[call-overload]  # the stubs say bytes; run time wants str
        raise OSError(f"could not write {path}")
    size = path.stat().st_size
    if size > limit:
        raise OSError(f"{path} is {size:,} bytes, over the limit of {limit:,}")
    return size


def capture_views(
    window: MainWindow,
    vault: Vault,
    out: Path,
    *,
    scene: Scene = Scene(),
    small: Path | None = None,
    small_views: Sequence[str] = ("memories", "ask"),
    log: Callable[[str], None] = lambda _line: None,
) -> list[Path]:
    """Show each view with its recipe and save it as ``out/NN-<key>.png``; returns the files written.

    With ``small``, the views in ``small_views`` are also saved there in 256 colours (:func:`save_small`).
    """
    out.mkdir(parents=True, exist_ok=True)
    recipes = Recipes(window, vault, scene)
    written: list[Path] = []
    for number, spec in enumerate(VIEWS, start=1):
        window.show_view(spec.key)
        if not pump(recipes.prepare(spec.key)):
            log(f"warning: {spec.key} did not finish loading; saved as it was")
        settle()
        image = window.grab().toImage()
        path = out / f"{number:02d}-{spec.key}.png"
        if not image.save(str(path)):
            raise OSError(f"could not write {path}")
        written.append(path)
        log(f"{path}  {image.width()}×{image.height()}")
        if small is not None and spec.key in small_views:
            small.mkdir(parents=True, exist_ok=True)
            reduced = small / f"{spec.key}.png"
            log(f"{reduced}  {save_small(image, reduced):,} bytes")
            written.append(reduced)
    return written
