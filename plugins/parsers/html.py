"""The HTML parser (``.html``, ``.htm``): readable text, headings as sections, title and meta tags.

Text comes from :mod:`plugins.parsers.html_tokens` (linear on any input); this module decides what
is readable.  Block elements separate paragraphs; list items and table rows sit one per line, with
a row's cells joined by `` | ``; ``<pre>`` keeps its line breaks and spaces while elsewhere runs of
whitespace collapse to one space; ``<br>`` breaks a line; an image contributes its ``alt`` text.
``<script>``, ``<style>``, ``<noscript>``, ``<template>`` and comments contribute nothing.
Headings ``<h1>``–``<h6>`` become sections (paragraph groups when there are none); ``<title>`` is
the title (else the first ``<h1>``, else the file name); ``<meta name|property=… content=…>`` and
``<html lang>`` go to metadata.  Nothing here recurses, so nesting depth does not matter.

:class:`HtmlTextExtractor` is also used by the Markdown parser for raw HTML blocks.
"""

from __future__ import annotations

import re

from engine.plugin_api import ParsedDocument, ParseLimits
from plugins.parsers.assembly import TextAssembler, title_from_name
from plugins.parsers.decoding import decode, normalise_newlines, strip_controls
from plugins.parsers.html_tokens import attributes, tokens
from plugins.parsers.limits import check_bytes
from plugins.parsers.sectioning import paragraph_sections, sections_from_headings

_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset(
    {"address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details"}
    | {"dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form"}
    | {"frameset", "header", "hgroup", "hr", "html", "legend", "li", "main", "menu", "nav", "ol"}
    | {"optgroup", "option", "p", "section", "select", "summary", "tbody", "tfoot", "thead", "ul"}
)
_CELLS = frozenset({"td", "th"})
_LISTS = frozenset({"ul", "ol", "dl", "menu", "dir"})
_KIND_OF_BLOCK = {"li": "item", "dt": "item", "dd": "item", "tr": "row"}
_CHARSET = re.compile(
    rb"""<meta[^>]{0,512}?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]{1,40})"""
    rb"""|<\?xml[^>]{0,200}?encoding\s*=\s*["']([A-Za-z0-9._:-]{1,40})""",
    re.IGNORECASE,
)
_MAX_METADATA = 100
_MAX_METADATA_VALUE = 1000


class HtmlTextExtractor:
    """Feeds HTML's readable text into a :class:`TextAssembler`; collects title and metadata."""

    def __init__(self, out: TextAssembler) -> None:
        self._out = out
        self._lines: list[list[str]] = [[]]
        self._has_text = False
        self._kind = "paragraph"
        self._pre = 0
        self._template = 0
        self._heading = 0
        self._cell_depth = 0
        self._cells_in_row = 0
        self._title_parts: list[str] | None = None
        self.title = ""
        self.first_h1 = ""
        self.metadata: dict[str, str] = {}

    def feed(self, source: str) -> None:
        """Extract the text of a whole HTML document or fragment."""
        for token in tokens(source):
            if token.kind == "text":
                self._on_text(token.data)
            elif token.kind == "start":
                self._on_start(token.data, token.attributes)
            elif token.kind == "end":
                self._on_end(token.data)
            # "raw" tokens are script, style and similar content: never readable text.
        self._flush()

    def _on_text(self, data: str) -> None:
        if self._template:
            return
        if self._title_parts is not None:
            self._title_parts.append(data)
        else:
            self._lines[-1].append(data)
            self._has_text = self._has_text or not data.isspace()

    def _on_start(self, name: str, raw_attributes: str) -> None:
        if name == "template":
            self._template += 1
        if self._template:
            return
        if name == "title":
            self._title_parts = []
        elif name in ("meta", "html"):
            self._on_metadata(name, attributes(raw_attributes))
        elif name == "img":
            alt = attributes(raw_attributes).get("alt", "").strip()
            if alt:
                self._on_text(f" {alt} ")
        elif name == "br":
            self._line_break()
        elif name in _HEADINGS:
            self._end_heading()
            self._flush()
            self._heading = _HEADINGS[name]
        elif name in ("tr", "table"):
            self._flush()
            self._kind = "row" if name == "tr" else "paragraph"
            self._cells_in_row = 0
            self._cell_depth = 0
        elif name in _CELLS:
            if self._cells_in_row:
                self._lines[-1].append(" | ")
            self._cells_in_row += 1
            # Set, not counted: HTML lets "</td>" be omitted, and a count would then never return
            # to zero.
            self._cell_depth = 1
        elif name == "pre":
            self._flush()
            self._pre += 1
        elif name in _BLOCKS:
            self._block_boundary()
            if not self._cell_depth:
                self._kind = _KIND_OF_BLOCK.get(name, "paragraph")

    def _on_end(self, name: str) -> None:
        if name == "template":
            self._template = max(self._template - 1, 0)
            return
        if self._template:
            return
        if name == "title" and self._title_parts is not None:
            if not self.title:
                self.title = " ".join("".join(self._title_parts).split())
            self._title_parts = None
        elif name in _HEADINGS:
            self._end_heading()
        elif name in _CELLS:
            self._cell_depth = 0
        elif name in ("tr", "table"):
            self._flush()
            self._cell_depth = 0
            if name == "table":
                self._out.end_run()
        elif name == "pre" and self._pre:
            self._flush()
            self._pre -= 1
        elif name in _BLOCKS:
            self._block_boundary()
            if name in _LISTS and not self._cell_depth:
                self._out.end_run()

    def _on_metadata(self, name: str, attrs: dict[str, str]) -> None:
        if name == "html":
            key, value = "lang", attrs.get("lang", "")
        else:
            key = attrs.get("name") or attrs.get("property") or attrs.get("http-equiv") or ""
            value = attrs.get("content", "")
            if not key and "charset" in attrs:
                key, value = "charset", attrs["charset"]
        key, value = key.strip().lower(), " ".join(value.split())[:_MAX_METADATA_VALUE]
        if key and value and key not in self.metadata and len(self.metadata) < _MAX_METADATA:
            self.metadata[key] = value

    def _end_heading(self) -> None:
        if not self._heading:
            return
        level, self._heading = self._heading, 0
        text = self._take()
        self._out.add_heading(text, level)
        if level == 1 and not self.first_h1:
            self.first_h1 = " ".join(text.split())

    def _block_boundary(self) -> None:
        if self._cell_depth:
            # Inside a table cell a block only separates words, so that the row stays one line.
            self._lines[-1].append(" ")
        elif self._heading:
            # A heading whose end tag is missing would otherwise swallow the rest of the page:
            # the first block boundary after some heading text ends it.
            if self._has_text:
                self._end_heading()
        else:
            self._flush()

    def _line_break(self) -> None:
        if self._pre:
            self._lines[-1].append("\n")
        else:
            self._lines.append([])

    def _take(self) -> str:
        lines, self._lines = self._lines, [[]]
        self._has_text = False
        if self._pre:
            text = "".join("".join(line) for line in lines)
            return text[1:] if text.startswith("\n") else text
        return "\n".join(" ".join("".join(line).split()) for line in lines)

    def _flush(self) -> None:
        if self._heading:
            return
        text = self._take()
        self._out.add(text, kind=self._kind)
        self._kind = "paragraph"


class HtmlParser:
    """HTML documents and fragments, decoded by byte-order mark, declared charset or guess."""

    name: str = "html"
    version: str = "3"  # 2: numeric character references of any length are read, never a crash; 3: tables
    extensions: tuple[str, ...] = (".html", ".htm", ".xhtml")
    mime_types: tuple[str, ...] = ("text/html", "application/xhtml+xml")

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        """Extract ``data``'s readable text and structure (see the module docstring)."""
        check_bytes(data, limits)
        declared = _CHARSET.search(data[:1024])
        label = (declared.group(1) or declared.group(2)).decode("ascii") if declared else None
        decoded = decode(data, declared=label)
        assembler = TextAssembler(limits)
        extractor = HtmlTextExtractor(assembler)
        extractor.feed(strip_controls(normalise_newlines(decoded.text)))
        text = assembler.text()
        sections = sections_from_headings(text, assembler.headings) or paragraph_sections(text)
        return ParsedDocument(
            text=text,
            sections=sections,
            title=extractor.title or extractor.first_h1 or title_from_name(name),
            metadata={"encoding": decoded.encoding, **extractor.metadata},
            warnings=decoded.warnings,
            tables=assembler.tables,
        )
