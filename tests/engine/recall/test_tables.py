"""What a span inside a table shows (:mod:`engine.recall.tables`): the table whole when it fits, else its caption,
its first row and the rows around the span; the span's own text outside the table kept; and the span alone where a
redaction broke the offsets."""

from __future__ import annotations

from engine.documents.model import TableInSection
from engine.recall.hydrate import SpanRow
from engine.recall.tables import table_view

HEADER = "Statement of Cash Flows\nYears ended December 31\n"
ROWS = [f"Row {k:02d} {100 + k} {200 + k}" for k in range(60)]
BODY = "\n".join(ROWS)
BEFORE = "A paragraph before the table.\n"
DOC = BEFORE + HEADER + BODY + "\nA sentence after it."
T0 = len(BEFORE)
TABLE = TableInSection(7, T0, T0 + len(HEADER) + len(BODY), len(HEADER), HEADER + BODY)


def span(start: int, end: int, text: str | None = None, table: TableInSection | None = TABLE) -> SpanRow:
    return SpanRow(1, 1, "d.pdf", 1, "s", DOC[start:end] if text is None else text, None, None, start, end, None, table)


def row_at(k: int) -> int:
    return DOC.index(ROWS[k])


def test_a_table_that_fits_is_shown_whole_with_the_span_text_outside_it() -> None:
    view = table_view(span(0, row_at(3)), limit=10_000)
    assert view is not None and view.whole and view.table_id == 7
    assert view.text == BEFORE + HEADER + BODY
    after = table_view(span(row_at(58), len(DOC)), limit=10_000)
    assert after is not None and after.text == HEADER + BODY + "\nA sentence after it."


def test_a_long_table_shows_its_caption_first_row_and_the_rows_around_the_span() -> None:
    view = table_view(span(row_at(40), row_at(42)), limit=400)
    assert view is not None and not view.whole
    lines = view.text.split("\n")
    assert view.text.startswith(HEADER) and lines[2] == ROWS[0] and lines[3] == "…"
    assert ROWS[40] in lines and ROWS[41] in lines and ROWS[39] in lines and ROWS[42] in lines
    assert lines[-1] == "…" and ROWS[59] not in lines
    assert len(view.text) <= 400 + len(HEADER)  # the header and the rows within the limit


def test_a_span_whose_text_the_firewall_changed_stands_for_the_rows() -> None:
    masked = "Row 40 [EMAIL] 240"
    view = table_view(span(row_at(40), row_at(41), text=masked), limit=200)
    assert view is not None and view.text == HEADER + "…\n" + masked


def test_a_span_outside_any_table_has_no_view() -> None:
    assert table_view(span(0, 10, table=None)) is None
