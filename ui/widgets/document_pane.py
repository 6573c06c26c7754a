"""One document in full: status, where it came from, its summary, its section tree, spans and summaries.

:meth:`DocumentPane.show_document` loads the document's tree on the reader pool; choosing a section
shows its summary (distillation) and its spans with their pages and character offsets, choosing a
span shows its text.  Status: ``processing`` (spans are searchable, summaries are being made),
``ready``, ``degraded`` (with the reason) or ``failed``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from PySide6.QtCore import QItemSelection, QModelIndex, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTextBrowser,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from engine.documents.model import DocumentInfo, DocumentTree, SectionView, SpanView, TableInSection
from engine.errors import NotFound
from ui.format import local_time, plural
from ui.models.documents import reading_words
from ui.models.sections import SectionTreeModel, page_label
from ui.ops import OpRunner
from ui.widgets.labels import heading_label, secondary_label

STATUS_TEXT = {
    "processing": "Processing: its text is searchable now; section summaries are being made.",
    "ready": "Ready: searchable, with section and document summaries.",
    "degraded": "Degraded",
    "failed": "Failed",
}
STATUS_ICON = {
    "processing": "status-busy",
    "ready": "status-ok",
    "degraded": "status-warn",
    "failed": "status-error",
}
ICON_PX = 16
REFLOW_MIN_WIDTH = 40  # text whose longest line is shorter than this was not hard-wrapped
REFLOW_FULL_LINE = 0.8  # a line at least this fraction of the longest one ran on into the next
_BLOCK_START = re.compile(r"\s*(?:[-*+•|#>]|\d+[.)]\s)")


def reflow(text: str) -> str:
    """``text`` with the hard wraps of a PDF's lines joined back into paragraphs.

    A line that ran to (nearly) the full width continues on the next one, unless that one starts a list item,
    a table row, a heading or a quote; short lines (a paragraph's last, a heading) and blank lines keep their
    breaks.  Text that was never wrapped (Markdown paragraphs on one line) comes back unchanged.
    """
    lines = text.split("\n")
    longest = max((len(line) for line in lines), default=0)
    if longest < REFLOW_MIN_WIDTH:
        return text
    out: list[str] = []
    previous = 0
    for line in lines:
        runs_on = previous >= longest * REFLOW_FULL_LINE
        if out and runs_on and line.strip() and not _BLOCK_START.match(line):
            out[-1] = f"{out[-1].rstrip()} {line.strip()}"
        else:
            out.append(line)
        previous = len(line.strip())
    return "\n".join(out)


def size_text(size: int) -> str:
    """``812 bytes`` / ``14.2 KB`` / ``3.1 MB``."""
    if size < 1024:
        return f"{size:,} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def status_line(info: DocumentInfo) -> str:
    """The document's status in words (with the reason when it is degraded or failed)."""
    text = STATUS_TEXT.get(info.status, info.status)
    if info.reading is not None:
        progress = reading_words(info.reading)
        return f"Being read in the background ({progress}); its text becomes searchable when it is stored."
    if info.status in ("degraded", "failed"):
        reason = info.status_reason or "no reason recorded"
        return f"{text}: {reason}."
    return text


def _summary_html(text: str | None, pending: bool) -> str:
    if text:
        return f"<p>{html.escape(text)}</p>"
    note = "Being summarised…" if pending else "No summary."
    return f"<p><i>{note}</i></p>"


def section_html(section: SectionView, pending: bool) -> str:
    """A section: where it is, its summary, and its spans with pages and offsets."""
    where = [page_label(section.page_start, section.page_end)]
    where.append(f"characters {section.start_char:,}–{section.end_char:,}")
    where.append(plural(len(section.spans), "span"))
    parts = [
        f"<h3>{html.escape(section.title or f'Section {section.ordinal + 1}')}</h3>",
        f"<p><i>{html.escape(' · '.join(w for w in where if w))}</i></p>",
        "<p><b>Section summary</b></p>",
        _summary_html(section.distillation, pending),
        "<p><b>Spans</b></p>",
    ]
    parts += [span_html(span) for span in section.spans]
    return "".join(parts)


def span_html(span: SpanView, *, heading: str | None = None) -> str:
    """One span with its number, pages and character offsets."""
    where = " · ".join(
        w
        for w in (
            page_label(span.page_start, span.page_end),
            f"characters {span.start_char:,}–{span.end_char:,}",
        )
        if w
    )
    title = f"<h3>{html.escape(heading)}</h3>" if heading else ""
    return (
        f"{title}<p><b>¶{span.ordinal + 1}</b> <i>{html.escape(where)}</i><br>"
        f"{html.escape(reflow(span.text)).replace(chr(10), '<br>')}</p>"
    )


def table_html(table: TableInSection) -> str:
    """A table kept whole, rows as they were read: what recall shows for a passage inside it."""
    where = f"characters {table.start_char:,}–{table.end_char:,}"
    return (
        f"<h3>Table</h3><p><i>{html.escape(where)} · shown whole to a model when a passage inside it is recalled"
        f"</i></p><pre>{html.escape(table.text)}</pre>"
    )


class DocumentPane(QWidget):
    """The document shown on the right of the Documents view."""

    def __init__(
        self,
        runner: OpRunner,
        icon: Callable[[str], QIcon],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._runner = runner
        self._icon = icon
        self._generation = 0
        self._focus: int | None = None  # a section or span to choose once the tree is shown
        self.document_id: int | None = None
        self.tree: DocumentTree | None = None
        self.title = heading_label("", scale=1.2)
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status_icon = QLabel()
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        self.status_label.setAccessibleName("Document status")
        self.meta_label = secondary_label("")
        self.meta_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary = QTextBrowser()
        self.summary.setAccessibleName("Document summary")
        self.summary.setMaximumHeight(self.fontMetrics().lineSpacing() * 6 + 16)
        self.sections = SectionTreeModel(self)
        self.section_view = QTreeView()
        self.section_view.setModel(self.sections)
        self.section_view.setAccessibleName("Sections and spans")
        self.section_view.setUniformRowHeights(True)
        self.section_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.section_view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.section_view.selectionModel().selectionChanged.connect(self._on_section_chosen)
        self.detail = QTextBrowser()
        self.detail.setAccessibleName("Section or span")

        status_row = QHBoxLayout()
        status_row.setContentsMargins(0, 0, 0, 0)
        status_row.addWidget(self.status_icon, 0, Qt.AlignmentFlag.AlignTop)
        status_row.addWidget(self.status_label, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        split.addWidget(self.section_view)
        split.addWidget(self.detail)
        split.setSizes([300, 360])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(status_row)
        layout.addWidget(self.meta_label)
        layout.addWidget(heading_label("Document summary", scale=1.0))
        layout.addWidget(self.summary)
        layout.addWidget(heading_label("Sections", scale=1.0))
        layout.addWidget(split, 1)

    # -- loading -----------------------------------------------------------------------------------
    def show_document(self, document_id: int | None) -> None:
        """Load and show ``document_id`` (None: clear)."""
        changed = document_id != self.document_id
        self.document_id = document_id
        self._generation += 1
        if document_id is None:
            self._show(None)
            return
        if changed:
            self.title.setText("Loading…")
        generation = self._generation
        self._runner.read(
            lambda vault: vault.documents.get(document_id),
            lambda tree: self._arrived(generation, tree),
            on_error=lambda error: self._failed(generation, error),
        )

    def focus_item(self, item_id: int) -> None:
        """Choose the section or span ``item_id`` in the tree: now if it is shown, else when it arrives."""
        index = self.sections.index_of_item(item_id)
        if index.isValid():
            self._focus = None
            self._choose(index)
        else:
            self._focus = item_id

    def _choose(self, index: QModelIndex) -> None:
        if index.parent().isValid():
            self.section_view.expand(index.parent())
        self.section_view.setCurrentIndex(index)
        self.section_view.scrollTo(index)

    def reload(self) -> None:
        """Load the shown document again (its status or summaries changed)."""
        if self.document_id is not None:
            self.show_document(self.document_id)

    def loaded(self) -> bool:
        """True when the shown document's tree has arrived."""
        return self.tree is not None and self.tree.info.id == self.document_id

    def _arrived(self, generation: int, tree: DocumentTree) -> None:
        if generation == self._generation:
            self._show(tree)

    def _failed(self, generation: int, error: BaseException) -> None:
        if generation != self._generation:
            return
        if isinstance(error, NotFound):  # deleted meanwhile: the view moves on
            self._show(None)
            return
        self._runner.report(error)

    # -- showing -----------------------------------------------------------------------------------
    def _show(self, tree: DocumentTree | None) -> None:
        previous = self._chosen_id()
        same_document = tree is not None and self.tree is not None and self.tree.info.id == tree.info.id
        self.tree = tree
        self.sections.set_tree(tree)
        if tree is None:
            self.title.setText("")
            self.status_label.setText("")
            self.status_icon.clear()
            self.meta_label.setText("")
            self.summary.clear()
            self.detail.clear()
            return
        info = tree.info
        self.title.setText(info.name)
        self.status_label.setText(status_line(info))
        icon = self._icon(STATUS_ICON.get(info.status, "status-warn"))
        self.status_icon.setPixmap(icon.pixmap(ICON_PX, ICON_PX))
        self.meta_label.setText(self._meta(info))
        self.summary.setHtml(_summary_html(info.distillation, info.status == "processing"))
        self.section_view.expandAll()
        focus, self._focus = self._focus, None
        index = self.sections.index_of_item(focus) if focus is not None else QModelIndex()
        if not index.isValid() and same_document and previous:
            index = self.sections.index_of_item(previous)
        if not index.isValid():
            index = self.sections.index(0, 0)
        if index.isValid():
            self._choose(index)
        else:
            self.detail.setHtml("<p><i>This document has no sections.</i></p>")

    def _chosen_id(self) -> int | None:
        item = self.sections.item(self.section_view.currentIndex())
        return item.id if item is not None and not isinstance(item, TableInSection) else None

    @staticmethod
    def _meta(info: DocumentInfo) -> str:
        parts = [info.path or "uploaded (no file)", size_text(info.size_bytes)]
        if info.page_count:
            parts.append(plural(info.page_count, "page"))
        parts.append(f"{plural(info.sections, 'section')}, {plural(info.spans, 'span')}")
        if info.parser:
            parts.append(f"{info.parser} parser v{info.parser_version}")
        parts.append(f"updated {local_time(info.updated_at)}")
        return " · ".join(parts)

    def _on_section_chosen(self, _new: QItemSelection, _old: QItemSelection) -> None:
        index = self.section_view.currentIndex()
        item = self.sections.item(index)
        pending = self.tree is not None and self.tree.info.status == "processing"
        if isinstance(item, SectionView):
            self.detail.setHtml(section_html(item, pending))
        elif isinstance(item, SpanView):
            parent = self.sections.item(index.parent())
            heading = f"In “{parent.title}”" if isinstance(parent, SectionView) else None
            self.detail.setHtml(span_html(item, heading=heading))
        elif isinstance(item, TableInSection):
            self.detail.setHtml(table_html(item))
