"""The PDF parser: text page by page (pypdf), pages kept, sections from outline, headings or pages.

Each page's extracted text is tidied (runs of spaces — justified text comes out with double
spaces — collapse to one, lines are trimmed, blank lines shrink to a single paragraph break) and
pages are joined by a blank line.  ``pages`` tile the text: a page runs to where the next one
starts, an empty page has no characters.  Sections come from the first of these that gives any:

1. the outline (bookmarks): each entry starts at its page, or at the line on that page that
   carries its title; nesting gives the level;
2. heading-like lines (:mod:`plugins.parsers.pdf_headings`);
3. groups of five pages ("Pages 1–5").

Everything pypdf raises while reading a damaged file becomes :class:`ParseError` (a page that
alone fails is skipped with a warning); ``MemoryError`` is left to the sandbox, which reports it
as a memory failure.  pypdf is imported on first use so that start-up never pays for it.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from engine.plugin_api import LimitExceeded, ParsedDocument, ParsedPage, ParseError, ParseLimits
from plugins.parsers.assembly import Heading, heading_title, title_from_name
from plugins.parsers.decoding import normalise_newlines, strip_controls
from plugins.parsers.limits import check_bytes, check_chars, check_pages
from plugins.parsers.pdf_headings import heading_lines, lines_of
from plugins.parsers.pdf_tables import tables_of
from plugins.parsers.sectioning import page_group_sections, sections_from_headings

if TYPE_CHECKING:
    from pypdf import PdfReader

#: Cap on any one stream's decoded size.  pypdf's own default (75 MB) lets a 50 KB Flate bomb
#: inflate to a content stream it then scans byte by byte for ~10 s; legitimate text pages are a
#: few hundred KB at most.
MAX_STREAM_BYTES = 16 * 1024 * 1024
_STREAM_CAPS = (
    "zlib_maximum_output_length",
    "lzw_maximum_output_length",
    "run_length_maximum_output_length",
    "brotli_maximum_output_length",
    "array_based_stream_maximum_output_length",
)
_MAX_WARNINGS = 20
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_METADATA_KEYS = {
    "/Title": "title",
    "/Author": "author",
    "/Subject": "subject",
    "/Keywords": "keywords",
    "/Creator": "creator",
    "/Producer": "producer",
    "/CreationDate": "created",
    "/ModDate": "modified",
}
# Titles that authoring tools fill in on their own and that say nothing about the document.
_JUNK_TITLE = re.compile(r"(?i)untitled.*|microsoft (word|powerpoint) - .*|.*\.(docx?|pptx?|odt|rtf|tex|pdf)")


class PdfParser:
    """Text PDFs through pypdf (scanned pages yield no text: the engine marks those degraded)."""

    name: str = "pdf"
    version: str = "2"  # 2: tables reported, and their rows never headings
    extensions: tuple[str, ...] = (".pdf",)
    mime_types: tuple[str, ...] = ("application/pdf",)

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        """Extract ``data``'s text page by page (see the module docstring)."""
        check_bytes(data, limits)
        if b"%PDF-" not in data[:1024]:
            raise ParseError("not a PDF: no %PDF- header in the first 1024 bytes")
        warnings: list[str] = []
        with _pypdf_session(warnings):
            try:
                return _parse(data, name, limits, warnings)
            except (ParseError, MemoryError):
                raise
            except Exception as exc:
                raise ParseError(f"unreadable PDF: {_describe(exc)}") from exc


def _parse(data: bytes, name: str, limits: ParseLimits, warnings: list[str]) -> ParsedDocument:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data), strict=False)
    encrypted = _unlock(reader)
    count = len(reader.pages)
    check_pages(count, limits)
    texts = _page_texts(reader, data, limits, warnings)
    text, pages = _join_pages(texts)
    lines = lines_of(text, pages)
    headings = _outline_headings(reader, text, pages, warnings)
    if not headings:
        headings = heading_lines(text, pages, lines)
    sections = sections_from_headings(text, headings, pages) if headings else page_group_sections(text, pages)
    metadata = _metadata(reader, warnings)
    metadata["pages"] = str(count)
    if encrypted:
        metadata["encrypted"] = "yes"
    if not text:
        warnings.append("no text extracted: scanned or image-only pages carry no text layer")
    title = metadata.get("title", "")
    if not title or _JUNK_TITLE.fullmatch(title):
        first = headings[0] if headings else None
        title = first.title if first is not None and first.start == 0 else title_from_name(name)
    return ParsedDocument(
        text=text,
        sections=sections,
        pages=pages,
        title=title,
        metadata=metadata,
        warnings=tuple(dict.fromkeys(warnings))[:_MAX_WARNINGS],
        tables=tables_of(lines),
    )


def _unlock(reader: PdfReader) -> bool:
    """Open an encrypted file with the empty user password (what viewers do); True if encrypted."""
    if not reader.is_encrypted:
        return False
    try:
        opened = reader.decrypt("")
    except Exception as exc:
        raise ParseError(f"encrypted PDF: cannot decrypt it ({_describe(exc)})") from exc
    if not opened:
        raise ParseError("encrypted PDF: it needs a password")
    return True


def _page_texts(reader: PdfReader, data: bytes, limits: ParseLimits, warnings: list[str]) -> list[str]:
    """Each page's tidied text; a page that fails alone is empty, with a warning.

    PDFium reads the text where it can (:class:`_Pdfium`); pypdf reads it where PDFium cannot open the file or a
    page.  Either way pypdf decodes each page's content stream first, under :data:`MAX_STREAM_BYTES`: a Flate bomb
    is refused before PDFium, which has no such cap, would inflate it.
    """
    texts: list[str] = []
    failures: list[tuple[int, Exception]] = []
    total = 0
    pages = len(reader.pages)
    report = limits.progress or _no_progress
    report(0, pages)  # the page count first: the sandbox allows a long document its time
    with _Pdfium.open(data, pages) as fast:
        for number, page in enumerate(reader.pages, start=1):
            report(number - 1, pages)
            try:
                raw = fast.text(number - 1, page) if fast is not None else None
                if raw is None:
                    raw = page.extract_text()
            except MemoryError:
                raise
            except Exception as exc:
                failures.append((number, exc))
                warnings.append(f"page {number}: no text ({_describe(exc)})")
                raw = ""
            text = tidy_page(raw)
            # As _join_pages will count: a blank line between pages that have text.
            total += len(text) + (2 if total and text else 0)
            check_chars(total, limits)
            texts.append(text)
    report(pages, pages)
    if failures and len(failures) == len(texts):
        number, first = failures[0]
        error = LimitExceeded if type(first).__name__ == "LimitReachedError" else ParseError
        raise error(f"no page could be read; page {number}: {_describe(first)}") from first
    return texts


class _Pdfium:
    """Page text through PDFium (``pypdfium2``): some thirty times pypdf's speed on the text-heavy pages of annual
    reports (200 pages/s against 7 on a 10-K whose every word is its own text operation), which is what lets a
    300-page filing parse in seconds.

    Opened only when PDFium counts the same pages as pypdf (a file pypdf had to repair may not be the file PDFium
    sees); a page PDFium cannot read falls back to pypdf (:meth:`text` answers None).
    """

    def __init__(self, document: Any) -> None:
        self._document = document

    @classmethod
    @contextmanager
    def open(cls, data: bytes, pages: int) -> Iterator[_Pdfium | None]:
        """The document opened by PDFium, or None (no PDFium here, a file it refuses, another page count)."""
        try:
            import pypdfium2
        except ImportError:
            yield None
            return
        try:
            document = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError:
            yield None
            return
        try:
            yield cls(document) if len(document) == pages else None
        finally:
            document.close()

    def text(self, index: int, page: Any) -> str | None:
        """Page ``index``'s text, after pypdf has decoded its content under the stream cap; None if PDFium
        cannot read the page."""
        contents = page.get_contents()
        if contents is not None:
            contents.get_data()  # raises pypdf's LimitReachedError past MAX_STREAM_BYTES
        import pypdfium2

        try:
            handle = self._document[index]
        except pypdfium2.PdfiumError:
            return None
        try:
            textpage = handle.get_textpage()
            try:
                return str(textpage.get_text_range())
            finally:
                textpage.close()
        except pypdfium2.PdfiumError:
            return None
        finally:
            handle.close()


def _no_progress(done: int, total: int) -> None:
    """Progress goes nowhere when the parser runs outside the sandbox."""


def tidy_page(raw: str) -> str:
    """A page's extracted text with spaces collapsed, lines trimmed, blank runs made one."""
    out: list[str] = []
    blank = False
    for line in strip_controls(normalise_newlines(raw)).split("\n"):
        line = _SPACES.sub(" ", line).strip()
        if not line:
            blank = bool(out)
            continue
        if blank:
            out.append("")
            blank = False
        out.append(line)
    return "\n".join(out)


def _join_pages(texts: list[str]) -> tuple[str, tuple[ParsedPage, ...]]:
    """The document text (pages separated by a blank line) and pages that tile it."""
    parts: list[str] = []
    starts: list[int | None] = []
    length = 0
    for text in texts:
        if not text:
            starts.append(None)
            continue
        if parts:
            parts.append("\n\n")
            length += 2
        starts.append(length)
        parts.append(text)
        length += len(text)
    # An empty page starts (and ends) where the next page with text starts.
    resolved: list[int] = []
    following = length
    for start in reversed(starts):
        following = following if start is None else start
        resolved.append(following)
    resolved.reverse()
    if resolved:
        resolved[0] = 0
    pages = tuple(
        ParsedPage(i + 1, start, resolved[i + 1] if i + 1 < len(resolved) else length)
        for i, start in enumerate(resolved)
    )
    return "".join(parts), pages


def _outline_headings(
    reader: PdfReader, text: str, pages: tuple[ParsedPage, ...], warnings: list[str]
) -> list[Heading]:
    """Outline entries placed in the text: at their title's line on their page, else its start."""
    if not text:
        return []
    try:
        entries = list(_flatten_outline(reader))
    except MemoryError:
        raise
    except Exception as exc:
        warnings.append(f"outline ignored: {_describe(exc)}")
        return []
    headings: list[Heading] = []
    unresolved = 0
    cursor = 0
    for title, level, page_index in entries:
        if page_index is None or not 0 <= page_index < len(pages) or not title:
            unresolved += 1
            continue
        page = pages[page_index]
        # Entries usually follow page order: look for this title after the previous entry when it
        # is on the same page, so two entries on one page land on their own lines.
        begin = max(page.start_char, cursor) if cursor < page.end_char else page.start_char
        start = _line_with_title(text, title, begin, page.end_char)
        if start is None:
            start = page.start_char
        cursor = start + 1
        headings.append(Heading(start, heading_title(title), level))
    if unresolved:
        warnings.append(f"{unresolved} outline entries point nowhere in this file and were skipped")
    return headings


def _flatten_outline(reader: PdfReader) -> Iterator[tuple[str, int, int | None]]:
    """``(title, level, 0-based page or None)`` of each outline entry, depth first, no recursion."""
    stack: list[tuple[Iterator[Any], int]] = [(iter(reader.outline), 1)]
    while stack:
        entries, level = stack[-1]
        for entry in entries:
            if isinstance(entry, list):
                # pypdf lists an entry's children right after it.
                stack.append((iter(entry), level + 1))
                break
            try:
                page = reader.get_destination_page_number(entry)
            except Exception:
                page = None
            yield " ".join(str(entry.title or "").split()), min(level, 6), page
        else:
            stack.pop()


def _line_with_title(text: str, title: str, begin: int, end: int) -> int | None:
    """Start of the first line in ``text[begin:end]`` that contains ``title`` (ignoring case)."""
    window = text[begin:end]
    at = window.find(title)
    if at < 0:
        at = window.casefold().find(title.casefold())
        # casefold can change lengths ("ß" → "ss"); only trust it when it did not.
        if at >= 0 and len(window.casefold()) != len(window):
            at = -1
    if at < 0:
        return None
    return begin + window.rfind("\n", 0, at) + 1


def _metadata(reader: PdfReader, warnings: list[str]) -> dict[str, str]:
    try:
        info = reader.metadata
        items = {key: info.get(key) for key in _METADATA_KEYS} if info else {}
    except MemoryError:
        raise
    except Exception as exc:
        warnings.append(f"document information ignored: {_describe(exc)}")
        return {}
    found: dict[str, str] = {}
    for key, value in items.items():
        cleaned = " ".join(str(value).split())[:1000] if value is not None else ""
        if cleaned:
            found[_METADATA_KEYS[key]] = cleaned
    return found


class _WarningCollector(logging.Handler):
    """Keeps the messages pypdf logs while it repairs a file, as the document's warnings."""

    def __init__(self, sink: list[str]) -> None:
        super().__init__(logging.WARNING)
        self._sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        if len(self._sink) < 4 * _MAX_WARNINGS:
            try:
                self._sink.append(record.getMessage()[:300])
            except Exception:
                self._sink.append(str(record.msg)[:300])


@contextmanager
def _pypdf_session(warnings: list[str]) -> Iterator[None]:
    """Tighter stream caps (where this pypdf supports them) and pypdf's log captured as warnings."""
    import pypdf

    apply = getattr(pypdf, "apply_configuration", None)
    caps: AbstractContextManager[object] = nullcontext()
    if apply is not None:
        current = pypdf.get_configuration()
        caps = apply(**{cap: MAX_STREAM_BYTES for cap in _STREAM_CAPS if hasattr(current, cap)})
    handler = _WarningCollector(warnings)
    logger = logging.getLogger("pypdf")
    logger.addHandler(handler)
    try:
        with caps:
            yield
    finally:
        logger.removeHandler(handler)


def _describe(exc: BaseException) -> str:
    message = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
