"""What a document span shows when it lies inside a table: the table, with its caption and header.

Spans are the searched units, cut by length, so a span inside a financial statement holds a few rows with neither
the statement's name, its period nor its column years — a figure without what it is.  The parser reports tables
(:class:`engine.plugin_api.ParsedTable`) and the vault keeps each one's text (``document_tables``); recall shows a
span that falls inside one as the table instead, with the span's own text before and after the table kept, so the
passage is never less than the span was.

A table longer than :data:`TABLE_CHARS` is shown as its caption and header lines, its first row (the column
header, most often), and the rows around the span's, as many as fit, with ``…`` where rows are left out.  When the
firewall changed the table's or the span's text (a redaction changes lengths, so offsets no longer line up), the
span's own text stands in for the rows around it.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.documents.model import TableInSection
from engine.recall.hydrate import SpanRow

#: The most characters a table adds to a passage (~600 tokens of the default 1,500).
TABLE_CHARS = 2400
_GAP = "…"


@dataclass(frozen=True, slots=True)
class TableView:
    """The passage a span shows, and whether it holds its table whole (a later span of the same table then adds
    nothing)."""

    table_id: int
    text: str
    whole: bool


def table_view(span: SpanRow, limit: int = TABLE_CHARS) -> TableView | None:
    """The passage ``span`` shows in the prompt text, or None when it lies in no table."""
    table = span.table
    if table is None:
        return None
    exact = len(table.text) == table.end_char - table.start_char and len(span.text) == span.end_char - span.start_char
    before = after = ""
    if exact:
        if span.start_char < table.start_char:
            before = span.text[: table.start_char - span.start_char]
        if span.end_char > table.end_char:
            after = span.text[len(span.text) - (span.end_char - table.end_char) :]
    room = max(limit - len(before) - len(after), 0)
    if len(table.text) <= room:
        return TableView(table.id, before + table.text + after, True)
    header = table.text[: table.header_chars]
    if not exact:
        return TableView(table.id, _joined(header, [_GAP, span.text]), False)
    lo = max(span.start_char, table.start_char) - table.start_char
    hi = min(span.end_char, table.end_char) - table.start_char
    rows = _window(table, lo, hi, room - len(header))
    return TableView(table.id, before + _joined(header, rows) + after, False)


def _window(table: TableInSection, lo: int, hi: int, room: int) -> list[str]:
    """The table's rows around the span's characters ``lo`` … ``hi`` (offsets into the table's text): its first
    row, the rows the span covers, and neighbours taken alternately below and above while they fit ``room``; a
    ``…`` line stands for each run left out."""
    lines: list[tuple[int, int]] = []  # (start, end) of each row line, offsets into the table's text
    at = table.header_chars
    for line in table.text[table.header_chars :].split("\n"):
        lines.append((at, at + len(line)))
        at += len(line) + 1
    if not lines:
        return []
    hit = [k for k, (a, b) in enumerate(lines) if a < hi and b > lo] or [0]
    keep = {0, *hit}
    used = sum(lines[k][1] - lines[k][0] + 1 for k in keep)
    below, above = hit[-1] + 1, hit[0] - 1
    while below < len(lines) or above > 0:
        for k in (below, above):
            if 0 < k < len(lines) and k not in keep:
                cost = lines[k][1] - lines[k][0] + 1
                if used + cost <= room:
                    keep.add(k)
                    used += cost
        if used >= room:
            break
        below, above = below + 1, above - 1
    out: list[str] = []
    for k in range(len(lines)):
        if k in keep:
            out.append(table.text[lines[k][0] : lines[k][1]])
        elif not out or out[-1] != _GAP:
            out.append(_GAP)
    return out


def _joined(header: str, rows: list[str]) -> str:
    """The header lines, then the rows, one per line."""
    head = header if not header or header.endswith("\n") else header + "\n"
    return head + "\n".join(rows)
