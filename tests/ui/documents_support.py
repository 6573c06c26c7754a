"""Real files for the document tests: Markdown notes, a paged PDF and a file that crashes its parser."""

from __future__ import annotations

import random
from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWidget

from bench.doc_corpus import pdf_bytes, pdf_report

NOTE = """# Garden notes

The tomatoes went in on the first warm weekend of May.

## Watering

Water the beds early in the morning, twice a week in summer.

### Rain barrels

The two barrels by the shed hold 400 litres together.

## Harvest

Basil is ready in July; the pumpkins take until October.
"""


def write_note(folder: Path, name: str = "garden.md", text: str = NOTE) -> Path:
    """A Markdown note with three heading levels."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def write_pdf(folder: Path, name: str = "report.pdf", pages: int = 3) -> Path:
    """A text PDF of ``pages`` pages with numbered headings (from the benchmark corpus)."""
    folder.mkdir(parents=True, exist_ok=True)
    laid_out, title, placed = pdf_report(random.Random(f"ui-{name}"), pages)
    path = folder / name
    path.write_bytes(pdf_bytes(laid_out, title=title, outline=placed))
    return path


def write_broken_pdf(folder: Path, name: str = "broken.pdf") -> Path:
    """A file that claims to be a PDF and is not: the parser fails and it is quarantined."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(b"%PDF-1.4 this is not really a PDF\n")
    return path


def file_mime(paths: list[Path]) -> QMimeData:
    """What a file manager puts on a drag of ``paths``."""
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return data


def drag_and_drop(target: QWidget, data: QMimeData, at: QPointF) -> tuple[bool, bool]:
    """Enter, move over and drop on ``target`` at ``at``; returns (enter accepted, drop accepted)."""
    actions = Qt.DropAction.CopyAction | Qt.DropAction.MoveAction
    buttons = Qt.MouseButton.LeftButton
    none = Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(at, actions, data, buttons, none)
    QApplication.sendEvent(target, enter)
    move = QDragMoveEvent(at, actions, data, buttons, none)
    QApplication.sendEvent(target, move)
    drop = QDropEvent(at, actions, data, buttons, none)
    QApplication.sendEvent(target, drop)
    return enter.isAccepted(), drop.isAccepted()
