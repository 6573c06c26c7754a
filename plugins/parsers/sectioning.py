"""Turning headings, paragraph groups or page groups into sections that tile a document's text.

Every function here returns sections that cover the text exactly and in order: the first starts at
offset 0, each ends where the next starts, the last ends at ``len(text)``.  Text before the first
heading becomes an untitled section at the top heading level, so a stack-based outline builder
keeps it a sibling of the first heading rather than a parent of everything.  Page numbers are
filled in when the caller passes the document's pages.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence

from engine.plugin_api import ParsedPage, ParsedSection
from plugins.parsers.assembly import Heading, heading_title

#: Target size of a paragraph-group section when a document has no headings.
GROUP_CHARS = 2000
#: Pages per section when a paged document has neither outline nor headings.
PAGES_PER_GROUP = 5
_GROUP_TITLE_CHARS = 60
_BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")


def sections_from_headings(
    text: str, headings: Sequence[Heading], pages: Sequence[ParsedPage] = ()
) -> tuple[ParsedSection, ...]:
    """Sections starting at each heading (in text order), plus an untitled lead-in if needed."""
    marks = sorted(headings, key=lambda h: h.start)
    if not marks or not text:
        return ()
    kept: list[Heading] = []
    for mark in marks:
        # Two headings on one offset would give an empty section: the first one stands.
        if (not kept or mark.start > kept[-1].start) and mark.start < len(text):
            kept.append(mark)
    if not kept:
        return ()
    bounds: list[tuple[str, int, int]] = [(h.title, h.level, h.start) for h in kept]
    top = min(h.level for h in kept)
    if text[: kept[0].start].strip():
        bounds.insert(0, ("", top, 0))
    else:
        title, level, _ = bounds[0]
        bounds[0] = (title, level, 0)
    return _tile(text, bounds, pages)


def paragraph_sections(
    text: str, pages: Sequence[ParsedPage] = (), *, target: int = GROUP_CHARS
) -> tuple[ParsedSection, ...]:
    """Sections of about ``target`` characters of whole paragraphs, titled by their first line."""
    starts: list[int] = []
    group_start = -1
    for start, end in _units(text, target):
        if group_start < 0:
            group_start = start
        elif start - group_start >= target or end - group_start > target * 3 // 2:
            starts.append(group_start)
            group_start = start
    if group_start < 0:
        return ()
    starts.append(group_start)
    starts[0] = 0
    bounds = [(_first_line(text, s), 1, s) for s in starts]
    return _tile(text, bounds, pages)


def page_group_sections(
    text: str, pages: Sequence[ParsedPage], *, size: int = PAGES_PER_GROUP
) -> tuple[ParsedSection, ...]:
    """Sections of ``size`` pages each, titled "Pages 1–5" (or "Page 6" for a lone page)."""
    if not text.strip():
        return ()
    sections: list[ParsedSection] = []
    for first in range(0, len(pages), size):
        group = pages[first : first + size]
        start = 0 if not sections else group[0].start_char
        nxt = first + size
        end = pages[nxt].start_char if nxt < len(pages) else len(text)
        if end <= start:
            continue
        low, high = group[0].number, group[-1].number
        title = f"Page {low}" if low == high else f"Pages {low}–{high}"
        sections.append(ParsedSection(title, 1, start, end, low, high))
    if sections and sections[-1].end_char != len(text):
        last = sections[-1]
        sections[-1] = ParsedSection(last.title, last.level, last.start_char, len(text), last.page_start, last.page_end)
    return tuple(sections)


def _tile(text: str, bounds: Sequence[tuple[str, int, int]], pages: Sequence[ParsedPage]) -> tuple[ParsedSection, ...]:
    starts = [p.start_char for p in pages]
    numbers = [p.number for p in pages]

    def page(offset: int) -> int | None:
        if not numbers:
            return None
        return numbers[max(bisect.bisect_right(starts, offset) - 1, 0)]

    sections = []
    for i, (title, level, start) in enumerate(bounds):
        end = bounds[i + 1][2] if i + 1 < len(bounds) else len(text)
        sections.append(ParsedSection(title, level, start, end, page(start), page(end - 1)))
    return tuple(sections)


def _units(text: str, target: int) -> Iterator[tuple[int, int]]:
    """Paragraph spans; a paragraph much longer than ``target`` is cut at lines, then at spaces."""
    pos = 0
    for gap in _BLANK_LINES.finditer(text):
        yield from _split_long(text, pos, gap.start(), target)
        pos = gap.end()
    yield from _split_long(text, pos, len(text), target)


def _split_long(text: str, start: int, end: int, target: int) -> Iterator[tuple[int, int]]:
    limit = 2 * target
    while end - start > limit:
        cut = text.rfind("\n", start + target // 2, start + limit)
        if cut < 0:
            cut = text.rfind(" ", start + target // 2, start + limit)
        cut = cut + 1 if cut >= 0 else start + target
        yield start, cut
        start = cut
    if text[start:end].strip():
        yield start, end


def _first_line(text: str, start: int) -> str:
    head = text[start : start + _GROUP_TITLE_CHARS * 4].lstrip()
    return heading_title(head.split("\n", 1)[0], _GROUP_TITLE_CHARS)
