"""Tables in text extracted from a PDF: where each one starts (caption and header lines) and ends (its last row).

A PDF keeps no table structure once its text is extracted, but a financial statement or a schedule still shows as
a run of *rows* — lines ending in figures (:func:`plugins.parsers.pdf_headings.is_table_row`) — with at most
:data:`~plugins.parsers.pdf_headings.TABLE_GAP` other lines (stubs, wrapped labels, sub-totals' captions) between
two rows.  Such a run of :data:`MIN_ROWS` rows or more is a table.  Its header is the lines just above its first
row that are not body text — the statement's name, its period, the unit, the column years — up to
:data:`HEADER_LINES` of them, stopping at a line that ends a sentence (the paragraph before), a long line, a row of
another table, or a page break.

Spans are cut as for any text, so keyword and vector search still find a single row; the table is what recall
shows around a span that falls inside it, so the model reads a figure with its column header and caption.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.plugin_api import ParsedTable
from plugins.parsers.pdf_headings import TABLE_GAP, Line

#: Rows a run needs to be a table (two rows may be a pair of figures in prose lines).
MIN_ROWS = 3
#: Lines above the first row looked at for the caption and the header.
HEADER_LINES = 4
#: A header line is short: a longer one is prose.
HEADER_LINE_CHARS = 120
_ENDS_SENTENCE = (".", "!", "?")


def tables_of(lines: Sequence[Line]) -> tuple[ParsedTable, ...]:
    """The tables among ``lines`` (from :func:`~plugins.parsers.pdf_headings.lines_of`), in text order."""
    tables: list[ParsedTable] = []
    floor = 0  # a header never reaches back into the table before
    for group in _row_runs(lines):
        first, last = group[0], group[-1]
        if len(group) >= MIN_ROWS:
            top = _header_top(lines, first, floor)
            end = lines[last].start + len(lines[last].text)
            tables.append(ParsedTable(lines[top].start, lines[first].start, end))
        floor = last + 1
    return tuple(tables)


def _row_runs(lines: Sequence[Line]) -> list[list[int]]:
    """The indexes of the table rows, grouped into runs with at most :data:`TABLE_GAP` other lines between rows."""
    runs: list[list[int]] = []
    for k, line in enumerate(lines):
        if not line.row:
            continue
        if runs and k - runs[-1][-1] - 1 <= TABLE_GAP:
            runs[-1].append(k)
        else:
            runs.append([k])
    return runs


def _header_top(lines: Sequence[Line], first: int, floor: int) -> int:
    """The first line of the caption and header above row ``first`` (``first`` itself when there is none)."""
    top = first
    while top > floor and first - top < HEADER_LINES:
        above = lines[top - 1]
        text = above.text.rstrip()
        if (
            above.row
            or above.page != lines[first].page
            or len(text) > HEADER_LINE_CHARS
            or text.endswith(_ENDS_SENTENCE)
        ):
            break
        top -= 1
    return top
