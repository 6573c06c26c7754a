"""Real files for the document tests: Markdown notes, a paged PDF, a file that crashes its parser, and memories
drawn from document spans."""

from __future__ import annotations

import random
from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWidget

from bench.doc_corpus import pdf_bytes, pdf_report
from engine import Vault
from engine.facts.model import Fact

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


def fact_from_span(vault: Vault, span_id: int, quote: str, subject: str, predicate: str, value: str) -> Fact:
    """A memory drawn from a document span: added through the facade, then given the span and quote as its source
    (the columns a document extractor writes), with offsets counted from the document's start."""
    span = vault.documents.span(span_id)
    fact = vault.facts.add(subject, predicate, value)
    start = span.start_char + span.text.index(quote)
    vault.store.write(
        lambda tx: tx.execute(
            "UPDATE facts SET span_id = ?, event_id = NULL, source_text = ?, source_start = ?, source_end = ?, "
            "source_role = 'document', extractor = 'rules' WHERE id = ?",
            (span_id, quote, start, start + len(quote), fact.id),
        )
    )
    return vault.facts.get(fact.id)
