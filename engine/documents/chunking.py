"""Cutting a parsed document into spans: the units that are embedded, keyword-indexed and recalled.

Spans follow the section tree (a span never crosses a section boundary, so a hit always names one section), aim at
~700 characters (about a paragraph or two: long enough to carry an answer, short enough for the embedder's 256
tokens and for a precise hit), end at paragraph or sentence boundaries when one is near, and overlap by ~120
characters so a sentence cut at one span's end is whole at the next one's start; a span starts and ends between
words, never inside one.  Offsets index the document's full text; page numbers come from the parser's page map.

Before spans are cut, :func:`shape` gives the outline a shape the vault can hold (sections and spans are rows,
full-text entries and vectors, and a section is distilled):

* **heading-only sections fold**: a section whose only text is its own heading (a part title right before its first
  chapter, a run of empty headings) joins the section after it — the heading's words lead that section's first span,
  so they are still searched — or, at the end of the document, the one before it;
* **the section cap** (``documents.max_sections``): past it, the deepest heading level is merged into the sections
  above it, level by level, and if one level is still too many, neighbouring sections are joined;
* **the span cap** (``documents.max_spans``): past it, neighbouring spans of a section are joined, so every word is
  still in a span (keyword search is whole) while each vector covers more text.

Text is never dropped; what a cap did is said in :attr:`Shape.notes`, which the document's status reason carries.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from engine.plugin_api import ParsedDocument, ParsedPage, ParsedSection, ParsedTable

TARGET_CHARS = 700
MAX_CHARS = 1000
OVERLAP_CHARS = 120
MIN_TAIL = 200

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*\s+")
#: A word's first character: one after whitespace (the look behind sees the text before the searched range too).
_WORD_START = re.compile(r"(?<=\s)\S")


@dataclass(frozen=True, slots=True)
class SpanCut:
    """One span: offsets into the document text, its section's index, and its pages."""

    section: int
    start: int
    end: int
    page_start: int | None
    page_end: int | None


@dataclass(frozen=True, slots=True)
class TableCut:
    """One table as stored: its section's index and offsets into the document text, within that section; the
    caption and header lines run from ``start`` to ``header_end``, the rows from there to ``end``."""

    section: int
    start: int
    header_end: int
    end: int


@dataclass(frozen=True, slots=True)
class Shape:
    """A document's sections, spans and tables as they will be stored, and what the caps changed (empty:
    nothing)."""

    sections: tuple[ParsedSection, ...]
    spans: list[SpanCut]
    notes: tuple[str, ...]
    tables: list[TableCut] = field(default_factory=list)


def sections_of(parsed: ParsedDocument) -> list[ParsedSection]:
    """The parser's sections, or one section covering the whole text when it gave none."""
    if parsed.sections:
        return list(parsed.sections)
    return [ParsedSection(parsed.title or "", 1, 0, len(parsed.text), None, None)]


def cut(parsed: ParsedDocument, sections: Sequence[ParsedSection] | None = None) -> list[SpanCut]:
    """Spans for every section of ``parsed`` (or of ``sections``, offsets into its text), in document order."""
    pages = PageMap(parsed.pages)
    spans: list[SpanCut] = []
    for index, section in enumerate(sections_of(parsed) if sections is None else sections):
        for start, end in _cut_range(parsed.text, section.start_char, section.end_char):
            spans.append(SpanCut(index, start, end, pages.page_at(start), pages.page_at(max(start, end - 1))))
    return spans


def shape(parsed: ParsedDocument, *, max_sections: int, max_spans: int) -> Shape:
    """The sections and spans ``parsed`` is stored as: heading-only sections folded, both caps applied (see the
    module docstring).  ``max_spans`` should exceed ``max_sections``: every section holds a span."""
    sections = fold_heading_only(parsed.text, sections_of(parsed))
    sections, section_note = cap_sections(sections, max_sections)
    spans, span_note = cap_spans(cut(parsed, sections), max_spans, len(sections))
    notes = tuple(note for note in (section_note, span_note) if note)
    return Shape(tuple(sections), spans, notes, place_tables(parsed.tables, sections, spans))


def place_tables(
    tables: Sequence[ParsedTable], sections: Sequence[ParsedSection], spans: Sequence[SpanCut]
) -> list[TableCut]:
    """Each table in the section holding its first row, clipped to that section (a table never crosses one: a
    section is what a span names), and left out when one span already holds it whole — recall would show that
    span's text anyway."""
    starts = [s.start_char for s in sections]
    ordered = all(a <= b for a, b in itertools.pairwise(starts))
    by_section: dict[int, list[SpanCut]] = {}
    for span in spans:
        by_section.setdefault(span.section, []).append(span)
    span_starts = {index: [sp.start for sp in cuts] for index, cuts in by_section.items()}
    placed: list[TableCut] = []
    for table in tables:
        index = _section_at(sections, starts, ordered, table.header_end)
        if index is None:
            continue
        section = sections[index]
        start, end = max(table.start_char, section.start_char), min(table.end_char, section.end_char)
        # a section's spans follow each other, so of those starting at or before the table the last reaches furthest
        before = bisect.bisect_right(span_starts.get(index, []), start) - 1
        if end <= start or (before >= 0 and end <= by_section[index][before].end):
            continue
        placed.append(TableCut(index, start, min(max(table.header_end, start), end), end))
    return placed


def _section_at(sections: Sequence[ParsedSection], starts: Sequence[int], ordered: bool, offset: int) -> int | None:
    """The index of the section holding ``offset`` (None: none does)."""
    if ordered:
        index = bisect.bisect_right(starts, offset) - 1
        candidates: Sequence[int] = (index,) if index >= 0 else ()
    else:
        candidates = range(len(sections))
    for index in candidates:
        if sections[index].start_char <= offset < sections[index].end_char:
            return index
    return None


def fold_heading_only(text: str, sections: Sequence[ParsedSection]) -> list[ParsedSection]:
    """``sections`` with each section whose only text is its heading joined to the next one (the last ones to the
    one before them; a document of nothing but headings becomes one section, titled by the first).

    Why: a heading on its own carries no passage to find, yet as a section it costs a row, a span, a vector and a
    distillation — 100,000 one-line headings made 100,000 of each.  Sections out of order (a third-party parser's)
    are left as they are.
    """
    if len(sections) < 2 or any(b.start_char < a.start_char for a, b in itertools.pairwise(sections)):
        return list(sections)
    folded: list[ParsedSection] = []
    waiting: ParsedSection | None = None  # the first of a run of heading-only sections, waiting for a section
    for section in sections:
        if _heading_only(text, section):
            waiting = waiting or section
            continue
        if waiting is not None:
            section = replace(section, start_char=waiting.start_char, page_start=waiting.page_start)
            waiting = None
        folded.append(section)
    if waiting is not None:  # the document ends in heading-only sections
        last = sections[-1]
        anchor = folded.pop() if folded else waiting
        folded.append(replace(anchor, end_char=max(anchor.end_char, last.end_char), page_end=last.page_end))
    return folded


def cap_sections(sections: Sequence[ParsedSection], limit: int) -> tuple[list[ParsedSection], str | None]:
    """At most ``limit`` sections covering the same text, and a note saying what was merged (None: nothing).

    The deepest heading level goes first (its sections join the section before them, which is their parent or an
    earlier part of it), level after level while more than one is left; then, if still too many, every ``k``
    neighbouring sections become one, titled by the first.  The outline keeps its top, and its text all of it.
    """
    found = len(sections)
    if found <= limit:
        return list(sections), None
    merged = list(sections)
    levels = sorted({s.level for s in merged})
    steps: list[str] = []
    while len(merged) > limit and len(levels) > 1:
        merged = _merge_level(merged, levels.pop())
        steps[:] = [f"headings below level {levels[-1]} merged into the sections above them"]
    if len(merged) > limit:
        group = math.ceil(len(merged) / limit)
        merged = [_joined(merged[i : i + group]) for i in range(0, len(merged), group)]
        steps.append(f"every {group} neighbouring sections joined into one")
    note = (
        f"section cap: {found:,} sections, more than documents.max_sections ({limit:,}); "
        f"{' and '.join(steps)}; kept {len(merged):,} sections and all the text"
    )
    return merged, note


def cap_spans(spans: Sequence[SpanCut], limit: int, sections: int) -> tuple[list[SpanCut], str | None]:
    """At most ``limit`` spans covering the same text, and a note (None: nothing changed).

    Every ``k`` neighbouring spans of a section become one span (from the first's start to the last's end), with
    ``k`` the smallest that fits: each section may end in one short group, so ``k`` leaves room for one per section.
    """
    found = len(spans)
    if found <= limit:
        return list(spans), None
    group = math.ceil(found / max(1, limit - sections))
    joined: list[SpanCut] = []
    run: list[SpanCut] = []
    for span in spans:
        if run and (span.section != run[0].section or len(run) == group):
            joined.append(_joined_spans(run))
            run = []
        run.append(span)
    if run:
        joined.append(_joined_spans(run))
    note = (
        f"span cap: {found:,} spans, more than documents.max_spans ({limit:,}); every {group} neighbouring spans "
        f"of a section joined into one, so all the text is still searched by its words but each vector stands for "
        f"more of it; kept {len(joined):,} spans"
    )
    return joined, note


def _heading_only(text: str, section: ParsedSection) -> bool:
    """Whether the section's text is its own title and nothing else (whitespace aside)."""
    title = " ".join(section.title.split())
    if not title or section.end_char - section.start_char > 4 * len(section.title) + 64:
        return False
    body = " ".join(text[section.start_char : section.end_char].split())
    if body == title:
        return True
    # a title shortened with "…" (long headings): the text must be that one line, starting as the title does
    return (
        title.endswith("…")
        and "\n" not in text[section.start_char : section.end_char].strip()
        and (body.startswith(title[:-1].rstrip()))
    )


def _merge_level(sections: Sequence[ParsedSection], level: int) -> list[ParsedSection]:
    """Sections of ``level`` or deeper joined to the section before them."""
    out: list[ParsedSection] = []
    for section in sections:
        if section.level >= level and out:
            out[-1] = _joined([out[-1], section])
        else:
            out.append(section)
    return out


def _joined(group: Sequence[ParsedSection]) -> ParsedSection:
    """One section spanning ``group`` (in order), with the first one's title and the shallowest level."""
    first, last = group[0], group[-1]
    return ParsedSection(
        first.title,
        min(s.level for s in group),
        min(s.start_char for s in group),
        max(s.end_char for s in group),
        first.page_start,
        last.page_end if last.page_end is not None else first.page_end,
    )


def _joined_spans(run: Sequence[SpanCut]) -> SpanCut:
    first, last = run[0], run[-1]
    return SpanCut(first.section, first.start, last.end, first.page_start, last.page_end)


def _cut_range(text: str, start: int, end: int) -> list[tuple[int, int]]:
    # skip leading/trailing whitespace so no span is blank
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    out: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        if end - pos <= MAX_CHARS:
            out.append((pos, end))
            break
        stop = _boundary(text, pos + TARGET_CHARS, min(end, pos + MAX_CHARS))
        if end - stop < MIN_TAIL:  # a tiny last span is worse than a slightly long one
            stop = end
        out.append((pos, stop))
        if stop >= end:
            break
        nxt = _overlap_start(text, max(pos + 1, stop - OVERLAP_CHARS), stop)
        while nxt < end and text[nxt].isspace():
            nxt += 1
        pos = nxt
    return [(a, b) for a, b in out if b > a]


def _boundary(text: str, target: int, limit: int) -> int:
    """A good place to end a span at or after ``target`` and before ``limit``: paragraph, sentence, space."""
    window = text[target:limit]
    match = _PARAGRAPH.search(window)
    if match:
        return target + match.start()
    match = _SENTENCE_END.search(window)
    if match:
        return target + match.end()
    space = window.rfind(" ")
    return target + space if space > 0 else limit


def _overlap_start(text: str, lo: int, hi: int) -> int:
    """Where the next span begins, in [lo, hi): the first sentence start, else the first line start, else the first
    word start — never inside a word, which would be lost to keyword search and shown broken to a model — and
    ``lo`` only when the overlap is one unbroken run of characters."""
    match = _SENTENCE_END.search(text, lo, hi)
    if match and match.end() < hi:
        return match.end()
    line = text.find("\n", lo, hi)
    if line != -1 and line + 1 < hi:
        return line + 1
    word = _WORD_START.search(text, lo, hi)
    return word.start() if word else lo


class PageMap:
    """Which page a character offset is on."""

    def __init__(self, pages: Sequence[ParsedPage]) -> None:
        ordered = sorted(pages, key=lambda p: p.start_char)
        self._starts = [p.start_char for p in ordered]
        self._pages = ordered

    def page_at(self, offset: int) -> int | None:
        """The page holding ``offset`` (None for formats without pages)."""
        if not self._pages:
            return None
        i = bisect.bisect_right(self._starts, offset) - 1
        return self._pages[max(0, i)].number
