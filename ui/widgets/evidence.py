"""The evidence of a fact: its quote highlighted inside the chat turn or document span it came from.

Facts remember the verbatim quote and its character offsets in the source.  For a chat turn the pane
shows the turns around it (``vault.conversations.neighbours``); for a document span, the document's
name, the headings above the span and its pages (``vault.documents.span_source``), with a link that
opens the document.  Either way the quote is marked inside its source in the palette's highlight
colours, so it reads in light and dark themes alike.  Facts added by hand and facts whose source
was forgotten each get a plain sentence instead.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QTextBrowser, QWidget

from engine import NotFound, Vault
from engine.dto import SpanSource
from engine.events import Event
from engine.facts.model import Fact
from ui.format import local_time
from ui.models.sections import page_label
from ui.widgets.document_pane import reflow

EvidenceKind = Literal["event", "document", "manual", "missing"]
NEIGHBOURS = 2
# Private-use characters bracket the quote while a span's text is reflowed: they survive the joining
# of lines, so the mark lands on the same words in the reflowed text.
_MARK_START, _MARK_END = "\ue000", "\ue001"


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where a fact came from, as loaded for the pane."""

    kind: EvidenceKind
    quote: str
    events: tuple[Event, ...] = ()
    centre_id: int | None = None
    start: int | None = None
    end: int | None = None
    span_id: int | None = None
    span: SpanSource | None = None


def load_evidence(vault: Vault, fact: Fact) -> Evidence:
    """The source turns or document span of ``fact`` (a reader-pool operation)."""
    if fact.event_id is not None:
        try:
            events = vault.conversations.neighbours(fact.event_id, before=NEIGHBOURS, after=NEIGHBOURS)
        except NotFound:
            return Evidence("missing", fact.source_text)
        return Evidence(
            "event",
            fact.source_text,
            tuple(events),
            fact.event_id,
            fact.source_start,
            fact.source_end,
        )
    if fact.span_id is not None:
        try:
            span = vault.documents.span_source(fact.span_id)
        except NotFound:
            return Evidence("missing", fact.source_text, span_id=fact.span_id)
        return Evidence(
            "document",
            fact.source_text,
            start=fact.source_start,
            end=fact.source_end,
            span_id=fact.span_id,
            span=span,
        )
    return Evidence("manual", fact.source_text)


def quote_bounds(content: str, quote: str, start: int | None, end: int | None) -> tuple[int, int]:
    """Where ``quote`` sits in ``content``: the stored offsets when they hold it, else a search.

    Returns ``(-1, -1)`` when the quote is not in the content at all.
    """
    if start is not None and end is not None and content[start:end] == quote and quote:
        return start, end
    found = content.find(quote) if quote else -1
    return (found, found + len(quote)) if found >= 0 else (-1, -1)


def span_quote_bounds(span: SpanSource, quote: str, start: int | None, end: int | None) -> tuple[int, int]:
    """Where ``quote`` sits in ``span.text``: offsets may count from the span or from the document's start.

    Returns ``(-1, -1)`` when the quote is not in the span at all.
    """
    if start is not None and end is not None and start >= span.start_char:
        shifted = start - span.start_char, end - span.start_char
        if span.text[shifted[0] : shifted[1]] == quote and quote:
            return shifted
    return quote_bounds(span.text, quote, start, end)


class EvidenceView(QTextBrowser):
    """Read-only rich text of a fact's evidence.

    Signals:
        event_activated(int): the person followed the link of the source turn (its event id).
        span_activated(int): the person followed the link of the source document span (its span id).
    """

    event_activated = Signal(int)
    span_activated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Evidence")
        self.anchorClicked.connect(self._on_anchor)
        self._evidence: Evidence | None = None
        self.highlighted_text = ""
        """The text marked as the quote (empty when no quote is marked)."""

    @property
    def evidence(self) -> Evidence | None:
        """What is shown (None while loading or empty)."""
        return self._evidence

    def show_loading(self) -> None:
        """A neutral line while the source loads."""
        self._evidence = None
        self.highlighted_text = ""
        self.setPlainText("Loading the source…")

    def clear_evidence(self) -> None:
        """Show nothing."""
        self._evidence = None
        self.highlighted_text = ""
        self.clear()

    def show_evidence(self, evidence: Evidence) -> None:
        """Render ``evidence``."""
        self._evidence = evidence
        self.highlighted_text = ""
        if evidence.kind == "event":
            self.setHtml(self._turns_html(evidence))
            return
        if evidence.kind == "document" and evidence.span is not None:
            self.setHtml(self._span_html(evidence, evidence.span))
            return
        if evidence.kind == "manual":
            note = "Added by hand: there is no chat turn or document behind this memory."
        elif evidence.span_id is not None:
            note = "The document this came from is no longer in the vault (it was deleted or read again since)."
        else:
            note = "The chat turn this came from is no longer in the vault (it was forgotten)."
        quote = (
            f"<blockquote>{html.escape(evidence.quote)}</blockquote>"
            if evidence.quote and evidence.kind != "manual"
            else ""
        )
        self.setHtml(f"<p>{html.escape(note)}</p>{quote}")

    def _span_html(self, evidence: Evidence, span: SpanSource) -> str:
        """The document, the headings above the span and its pages, then the span with the quote marked."""
        palette = self.palette()
        quiet = palette.color(QPalette.ColorRole.PlaceholderText).name()
        headings = " › ".join(title for title in span.section_path if title.strip())
        where = " · ".join(
            part for part in (headings, page_label(span.page_start, span.page_end), f"¶{span.ordinal + 1}") if part
        )
        header = (
            f"<b>{html.escape(span.document_name)}</b> "
            f"&nbsp;<a href='span:{span.span_id}'>open in Documents</a><br>"
            f"<span style='color:{quiet}'>{html.escape(where)}</span>"
        )
        start, end = span_quote_bounds(span, evidence.quote, evidence.start, evidence.end)
        if start < 0:
            body = _paragraphs(reflow(span.text))
            if evidence.quote:
                body += f"<br><i>Quote:</i> {html.escape(evidence.quote)}"
            return f"<p>{header}</p><p>{body}</p>"
        self.highlighted_text = span.text[start:end]
        marked = reflow(span.text[:start] + _MARK_START + span.text[start:end] + _MARK_END + span.text[end:])
        background = palette.color(QPalette.ColorRole.Highlight).name()
        foreground = palette.color(QPalette.ColorRole.HighlightedText).name()
        body = (
            _paragraphs(marked)
            .replace(_MARK_START, f"<span style='background-color:{background}; color:{foreground}'>")
            .replace(_MARK_END, "</span>")
        )
        return f"<p>{header}</p><p>{body}</p>"

    def _turns_html(self, evidence: Evidence) -> str:
        palette = self.palette()
        mark_bg = palette.color(QPalette.ColorRole.Highlight).name()
        mark_fg = palette.color(QPalette.ColorRole.HighlightedText).name()
        quiet = palette.color(QPalette.ColorRole.PlaceholderText).name()
        parts: list[str] = []
        for event in evidence.events:
            centre = event.id == evidence.centre_id
            header = (
                f"<b>{html.escape(speaker_label(event))}</b> "
                f"<span style='color:{quiet}'>· {html.escape(local_time(event.occurred_at))}</span>"
            )
            if centre:
                header += f" &nbsp;<a href='event:{event.id}'>open in its conversation</a>"
                body = self._marked(event.content, evidence, mark_bg, mark_fg)
                parts.append(f"<p>{header}<br>{body}</p>")
            else:
                body = _paragraphs(event.content)
                parts.append(f"<p style='color:{quiet}'>{header}<br>{body}</p>")
        if evidence.centre_id not in {e.id for e in evidence.events}:
            parts.append(f"<blockquote>{html.escape(evidence.quote)}</blockquote>")
        return "".join(parts)

    def _marked(self, content: str, evidence: Evidence, background: str, foreground: str) -> str:
        start, end = quote_bounds(content, evidence.quote, evidence.start, evidence.end)
        if start < 0:
            return _paragraphs(content) + (f"<br><i>Quote:</i> {html.escape(evidence.quote)}" if evidence.quote else "")
        self.highlighted_text = content[start:end]
        return (
            _paragraphs(content[:start])
            + f"<span style='background-color:{background}; color:{foreground}'>"
            + _paragraphs(content[start:end])
            + "</span>"
            + _paragraphs(content[end:])
        )

    def changeEvent(self, event: QEvent) -> None:
        """Redraw the quote's highlight in the new colours after a light/dark switch."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._evidence is not None:
            self.show_evidence(self._evidence)

    def _on_anchor(self, url: object) -> None:
        text = url.toString() if hasattr(url, "toString") else str(url)
        if text.startswith("event:"):
            self.event_activated.emit(int(text.removeprefix("event:")))
        elif text.startswith("span:"):
            self.span_activated.emit(int(text.removeprefix("span:")))


def speaker_label(event: Event) -> str:
    """Who said it: the author when the transcript names one, else "You" or the role."""
    if event.author:
        return event.author
    return {"user": "You", "assistant": "Assistant", "tool": "Tool", "system": "System"}.get(event.role, event.role)


def _paragraphs(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")
