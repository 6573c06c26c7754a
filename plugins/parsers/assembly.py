"""Building a document's text block by block while recording where its headings land.

Parsers that walk a structure (Markdown tokens, HTML tags) hand each block of readable text to a
:class:`TextAssembler`, which joins blocks with a blank line (a single newline between consecutive
list items or table rows), so a heading's offset in the final text is known the moment it is added
and never has to be searched for afterwards.  A run of table rows is a table (:class:`ParsedTable`):
its first row (the header row) opens it, and a short paragraph right before it ("Table 3: revenue by
region") is its caption.  The assembler also enforces ``max_chars`` as the text grows, so an
oversized document is refused before its full text is ever held in memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.plugin_api import ParsedTable, ParseLimits
from plugins.parsers.limits import check_chars

#: Block kinds whose consecutive blocks are separated by one newline instead of a blank line.
TIGHT_KINDS = frozenset({"item", "row"})
_TITLE_CHARS = 200
#: A paragraph right before a table is its caption when it is at most this long.
CAPTION_CHARS = 200
#: Rows a table needs (a header row and one more).
TABLE_ROWS = 2


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading's title, its level (1 = top) and its start offset in the document's text."""

    start: int
    title: str
    level: int


def heading_title(text: str, limit: int = _TITLE_CHARS) -> str:
    """``text`` on one line, whitespace collapsed, cut at a word boundary to ``limit`` chars."""
    words = text[: limit * 4].split()
    line = " ".join(words)
    if len(line) <= limit:
        return line
    cut = line.rfind(" ", 0, limit)
    return (line[: cut if cut > limit // 2 else limit - 1]).rstrip() + "…"


def title_from_name(name: str) -> str:
    """A fallback title: the file name without folders and extension ("notes/Plan.md" → "Plan")."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    stem = base.rsplit(".", 1)[0] if "." in base.lstrip(".") else base
    return stem or base


class TextAssembler:
    """Accumulates blocks of text and the headings among them."""

    def __init__(self, limits: ParseLimits) -> None:
        self._limits = limits
        self._parts: list[str] = []
        self._length = 0
        self._last_kind = ""
        self._last_block = (0, 0)  # the last block's start and length
        self._table: list[int] | None = None  # the open table: caption start, first row start, end, rows
        self._tables: list[ParsedTable] = []
        self.headings: list[Heading] = []

    @property
    def length(self) -> int:
        """Characters assembled so far."""
        return self._length

    def add(self, block: str, *, kind: str = "paragraph") -> int | None:
        """Append a block (surrounding blank lines and trailing spaces are dropped).

        Returns:
            The block's start offset in the text, or ``None`` when the block held no text.
        """
        block = block.strip("\n").rstrip()
        if not block.strip():
            return None
        if self._parts:
            tight = kind in TIGHT_KINDS and kind == self._last_kind
            self._append("\n" if tight else "\n\n")
        start = self._length
        self._append(block)
        if kind == "row":
            self._row(start, len(block))
        else:
            self._close_table()
        self._last_kind = kind
        self._last_block = (start, len(block))
        return start

    def end_run(self) -> None:
        """End a run of list items or table rows: the next block starts after a blank line."""
        self._last_kind = ""
        self._close_table()

    @property
    def tables(self) -> tuple[ParsedTable, ...]:
        """The tables assembled so far (an open one included)."""
        self._close_table()
        return tuple(self._tables)

    def _row(self, start: int, length: int) -> None:
        if self._table is None or self._last_kind != "row":
            self._close_table()
            caption_start, caption_length = self._last_block
            caption = self._last_kind == "paragraph" and caption_length <= CAPTION_CHARS
            self._table = [caption_start if caption else start, start, start + length, 0]
        self._table[2] = start + length
        self._table[3] += 1

    def _close_table(self) -> None:
        if self._table is not None and self._table[3] >= TABLE_ROWS:
            self._tables.append(ParsedTable(self._table[0], self._table[1], self._table[2]))
        self._table = None

    def add_heading(self, text: str, level: int) -> None:
        """Append a heading as its own block and remember it (empty headings are skipped)."""
        start = self.add(text, kind="heading")
        if start is not None:
            self.headings.append(Heading(start, heading_title(text), max(1, min(level, 6))))

    def text(self) -> str:
        """The text assembled so far."""
        joined = "".join(self._parts)
        self._parts = [joined]
        return joined

    def _append(self, piece: str) -> None:
        self._length += len(piece)
        check_chars(self._length, self._limits)
        self._parts.append(piece)
