"""Headings in text extracted from a PDF that has no outline.

Extracted text has lost fonts and sizes, so a heading is recognised by its shape and its
neighbours: a short numbered, ALL CAPS or Title Case line (:mod:`plugins.parsers.headings`) that
starts a paragraph — at a page start, after a blank line, after a line that ends a sentence, or
right after another heading — and is followed by body text.  Runs of more than three such lines are
table rows or lists, not headings, and a line that recurs on more than two pages (digits aside)
is a running header or footer.

Tables are the other source of false headings, and the costly one: in a financial statement every
row stub ("Inventories (509) (387) 57", "Pension", "First Quarter") looks like a Title Case line,
and each one made a section, so no span held a number together with its year and its statement.
A line ending in figures is a table row and never a heading; and a table — from its first row to
its last, across up to three lines of stubs between rows — holds no heading at all, so a statement
stays one section under its title.  That title carries the statement's period when the lines just
under it give one ("Consolidated Statement of Cash Flows — Years ended December 31 (2018, 2017,
2016)"), because a question names the year and the statement, not the page.  (Keeping only the
first of the heading lines straight above a table, as its caption, was measured and not kept.)  Letters a PDF spaced
apart ("BUSINESS SEG MENT") are joined back in a title when the joined word is one the document
uses and a part is not.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from engine.plugin_api import ParsedPage
from plugins.parsers.assembly import Heading, heading_title
from plugins.parsers.headings import heading_shape

_LINE = re.compile(r"[^\n]+")
_DIGITS = re.compile(r"\d+")
_ENDS_SENTENCE = (".", "!", "?", ":", ";", '"', "”", "’", ")")
_MAX_RUN = 3
_MAX_PAGES_WITH_SAME_LINE = 2
#: A figure in a table cell: 1,234 · (1,234) · $ 5,363 · 12.5% · -3 · a dash standing for nothing.  A cell never
#: starts with a space, so the spaces between cells can be split one way only, and the possessive repeat gives
#: nothing back: a line of many figures followed by a word fails at once instead of trying every split.
_CELL = r"(?:\(?-?(?:\$\s?)?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?\)?|[—–-])"
_TRAILING_CELLS = re.compile(rf"(?:\s+{_CELL})++\s*$")
_ONE_CELL = re.compile(_CELL)
#: Non-row lines (stubs, wrapped labels, sub-headings) a table may have between two of its rows.
TABLE_GAP = 3
#: Lines under a heading searched for its period ("Years ended December 31", "As of June 30, 2023").
_PERIOD_LOOKAHEAD = 4
_PERIOD = re.compile(
    r"(?i)^\(?(?:for\s+the\s+)?(?:(?:fiscal\s+)?(?:years?|quarters?|(?:three|six|nine|twelve|\d+)\s+months|"
    r"(?:\d+|thirteen|twelve|fifty-two|fifty-three)\s+weeks|periods?)\s+end(?:ed|ing)\b|as\s+of\b|at\s+[A-Z][a-z]+\s+\d)"
)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
#: A row of column years, perhaps after their unit: "(Millions) 2018 2017 2016".
_YEARS_ROW = re.compile(r"^(?:\([^)]{1,40}\)\s*)?(?:(?:FY|Fiscal\s+)?(?:19|20)\d\d\s*){2,}$")
_MAX_PERIOD_CHARS = 100
_WORDS = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the extracted text, judged once for headings and tables alike."""

    start: int
    text: str
    page: int
    opens_paragraph: bool
    level: int | None
    row: bool  # ends in figures: a table row


def heading_lines(text: str, pages: Sequence[ParsedPage], lines: Sequence[Line] | None = None) -> list[Heading]:
    """The heading-like lines of ``text`` (see the module docstring), in text order; ``lines`` when
    :func:`lines_of` was already run."""
    lines = lines_of(text, pages) if lines is None else lines
    recurring = _recurring(lines)
    in_table = _inside_tables(lines)
    vocabulary: _Vocabulary | None = None
    headings: list[Heading] = []
    i = 0
    while i < len(lines):
        if lines[i].level is None:
            i += 1
            continue
        run_end = i
        while run_end + 1 < len(lines) and lines[run_end + 1].level is not None:
            run_end += 1
        followed_by_body = run_end + 1 < len(lines)
        if run_end - i + 1 <= _MAX_RUN and followed_by_body and lines[i].opens_paragraph:
            kept = [
                k for k in range(i, run_end + 1) if not in_table[k] and _DIGITS.sub("#", lines[k].text) not in recurring
            ]
            for k in kept:
                if vocabulary is None:
                    vocabulary = _Vocabulary(text)
                period = _period(lines, run_end) if k == kept[-1] else ""  # the last heading above names the period
                title = heading_title(vocabulary.joined(lines[k].text) + period)
                headings.append(Heading(lines[k].start, title, lines[k].level or 1))
        i = run_end + 1
    return headings


def is_table_row(line: str) -> bool:
    """A line ending in figures: two or more cells, or one that is plainly an amount (``$``, a thousands comma,
    parentheses, a decimal, a percent, a dash) — "Note 14" or "Item 7" ends in a number and is still a heading."""
    match = _TRAILING_CELLS.search(" " + line)
    if match is None:
        return False
    cells = _ONE_CELL.findall(match.group())
    if len(cells) >= 2:
        return True
    cell = cells[0].strip() if cells else ""
    return bool(cell) and not cell.isdigit()  # "$ 1,234", "(12)", "4.5%", "—"; a bare number is not a figure


def _inside_tables(lines: Sequence[Line]) -> list[bool]:
    """For each line, whether it lies inside a table: after one row and before another, with at most
    :data:`TABLE_GAP` other lines between any two rows."""
    inside = [False] * len(lines)
    rows = [k for k, line in enumerate(lines) if line.row]
    for a, b in itertools.pairwise(rows):
        if b - a - 1 <= TABLE_GAP:
            for k in range(a + 1, b):
                inside[k] = True
    return inside


def _period(lines: Sequence[Line], run_end: int) -> str:
    """The period a statement's title is followed by, as a suffix for the title ("" when none)."""
    period = ""
    years: list[str] = []
    for line in lines[run_end + 1 : run_end + 1 + _PERIOD_LOOKAHEAD]:
        text = " ".join(line.text.split())
        if not period and len(text) <= _MAX_PERIOD_CHARS and _PERIOD.match(text):
            period = text.strip("()")
        elif _YEARS_ROW.match(text):
            years = list(dict.fromkeys(_YEAR.findall(text)))
            break
    if not period and not years:
        return ""
    if years and not _YEAR.search(period):
        period = f"{period} ({', '.join(years)})" if period else ", ".join(years)
    return f" — {period}"


class _Vocabulary:
    """The words a document uses, to join a title's letter-spaced word ("SEG MENT") back together."""

    def __init__(self, text: str) -> None:
        self._counts = Counter(word.casefold() for word in _WORDS.findall(text))

    def joined(self, line: str) -> str:
        """``line`` with each letter-spaced word joined back ("BUSINESS SEG MENT" → "BUSINESS SEGMENT")."""
        out: list[str] = []
        for word in line.split():
            if out and self._split_word(out[-1], word):
                out[-1] += word
            else:
                out.append(word)
        return " ".join(out)

    def _split_word(self, left: str, right: str) -> bool:
        """The document uses ``left + right`` as a word (twice or more), and one part is no word of its own there
        (used once at most: this very split): "MENT" is never used alone."""
        if not (_WORDS.fullmatch(left) and _WORDS.fullmatch(right)):
            return False
        whole = self._counts[(left + right).casefold()]
        return whole >= 2 and any(self._counts[part.casefold()] <= 1 for part in (left, right))


def lines_of(text: str, pages: Sequence[ParsedPage]) -> list[Line]:
    """Every line of ``text`` with where it is, whether it opens a paragraph, its heading level (None: not
    heading-shaped) and whether it is a table row."""
    page_starts = [p.start_char for p in pages]
    lines: list[Line] = []
    previous_end = 0
    previous_text = ""
    for match in _LINE.finditer(text):
        start, line = match.start(), match.group()
        page_index = bisect.bisect_right(page_starts, start) - 1 if page_starts else 0
        opens = (
            not lines
            or (bool(page_starts) and page_starts[page_index] == start)
            or "\n\n" in text[previous_end:start]
            or previous_text.endswith(_ENDS_SENTENCE)
        )
        page = pages[page_index].number if page_starts else 1
        row = is_table_row(line)
        lines.append(Line(start, line, page, opens, None if row else heading_shape(line), row))
        previous_end, previous_text = match.end(), line.rstrip()
    return lines


def _recurring(lines: Sequence[Line]) -> set[str]:
    """Heading-shaped lines (digits masked) found on more than two pages: headers and footers."""
    pages_of: dict[str, set[int]] = {}
    for line in lines:
        if line.level is not None:
            pages_of.setdefault(_DIGITS.sub("#", line.text), set()).add(line.page)
    return {key for key, found in pages_of.items() if len(found) > _MAX_PAGES_WITH_SAME_LINE}
