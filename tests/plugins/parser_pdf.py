"""Real PDF files for the parser tests: text pages in Helvetica, outlines, and hostile variants.

:func:`text_pdf` writes a PDF object by object (catalog, page tree, pages, content streams with
``BT /F1 12 Tf … Tj ET``, a Type1 Helvetica font, a cross-reference table and trailer) so that pypdf
extracts exactly the lines given.  The hostile builders damage such a file or assemble broken object
graphs on purpose: truncation, garbage after a valid header, a circular cross-reference chain, a
page tree that contains itself, deeply nested arrays, and a Flate stream that inflates to tens of
megabytes.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

PAGE_WIDTH = 612
PAGE_HEIGHT = 792


@dataclass(frozen=True, slots=True)
class Line:
    """One line of text on a page, drawn at ``size`` points."""

    text: str
    size: float = 11.0


PageSpec = Sequence[Line | str]


def _escape(text: str) -> bytes:
    raw = text.encode("cp1252")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def content_stream(lines: PageSpec) -> bytes:
    """A page's content: one ``Tj`` per line, top to bottom, spaced by the line's size."""
    out = [b"BT"]
    y = PAGE_HEIGHT - 72.0
    for item in lines:
        line = Line(item) if isinstance(item, str) else item
        y -= line.size * 1.6
        out.append(b"/F1 %.1f Tf 1 0 0 1 72 %.1f Tm (%s) Tj" % (line.size, y, _escape(line.text)))
    out.append(b"ET")
    return b"\n".join(out)


class PdfAssembler:
    """Numbered objects in, a PDF file with a correct cross-reference table out."""

    def __init__(self) -> None:
        self.objects: list[bytes] = []

    def reserve(self) -> int:
        """A new object number whose body is set later with :meth:`set`."""
        self.objects.append(b"null")
        return len(self.objects)

    def add(self, body: bytes) -> int:
        self.objects.append(body)
        return len(self.objects)

    def set(self, number: int, body: bytes) -> None:
        self.objects[number - 1] = body

    def add_stream(self, data: bytes, *, compress: bool = False, extra: bytes = b"") -> int:
        if compress:
            data = zlib.compress(data)
            extra += b" /Filter /FlateDecode"
        return self.add(b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(data), extra, data))

    def build(self, root: int, *, info: int | None = None, trailer_extra: bytes = b"") -> bytes:
        out = io.BytesIO()
        out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for number, body in enumerate(self.objects, start=1):
            offsets.append(out.tell())
            out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
        xref = out.tell()
        out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(self.objects) + 1))
        for offset in offsets:
            out.write(b"%010d 00000 n \n" % offset)
        info_ref = b" /Info %d 0 R" % info if info else b""
        out.write(
            b"trailer\n<< /Size %d /Root %d 0 R%s%s >>\nstartxref\n%d\n%%%%EOF\n"
            % (len(self.objects) + 1, root, info_ref, trailer_extra, xref)
        )
        return out.getvalue()


def _info_dict(pdf: PdfAssembler, info: dict[str, str]) -> int:
    entries = b" ".join(b"/%s (%s)" % (k.encode(), _escape(v)) for k, v in info.items())
    return pdf.add(b"<< " + entries + b" >>")


def text_pdf(pages: Sequence[PageSpec], *, compress: bool = False, info: dict[str, str] | None = None) -> bytes:
    """A PDF with one page per entry of ``pages``, each showing its lines in Helvetica."""
    pdf = PdfAssembler()
    catalog = pdf.reserve()
    tree = pdf.reserve()
    font = pdf.add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    kids = []
    for lines in pages:
        content = pdf.add_stream(content_stream(lines), compress=compress)
        kids.append(
            pdf.add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Contents %d 0 R "
                b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (tree, PAGE_WIDTH, PAGE_HEIGHT, content, font)
            )
        )
    refs = b" ".join(b"%d 0 R" % k for k in kids)
    pdf.set(tree, b"<< /Type /Pages /Kids [%s] /Count %d >>" % (refs, len(kids)))
    pdf.set(catalog, b"<< /Type /Catalog /Pages %d 0 R >>" % tree)
    return pdf.build(catalog, info=_info_dict(pdf, info) if info else None)


@dataclass(frozen=True, slots=True)
class Bookmark:
    """An outline entry pointing at a 0-based page; ``children`` nest under it."""

    title: str
    page: int
    children: tuple[Bookmark, ...] = ()


def with_outline(data: bytes, bookmarks: Sequence[Bookmark]) -> bytes:
    """``data`` rewritten by pypdf with ``bookmarks`` as its outline (as real tools produce it)."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import IndirectObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    stack: list[tuple[Bookmark, IndirectObject | None]] = [(b, None) for b in reversed(bookmarks)]
    while stack:
        mark, parent = stack.pop()
        item = writer.add_outline_item(title=mark.title, page_number=mark.page, parent=parent)
        stack.extend((child, item) for child in reversed(mark.children))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def encrypted(data: bytes, *, user_password: str, owner_password: str = "owner") -> bytes:
    """``data`` encrypted with RC4-128 (readable without optional crypto libraries)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


# -- hostile files --------------------------------------------------------------------------------
def truncated(data: bytes, keep: float = 0.6) -> bytes:
    """The first ``keep`` fraction of a valid file: no xref, no trailer, a stream cut in half."""
    return data[: int(len(data) * keep)]


def garbage_with_header(size: int = 20_000, seed: int = 7) -> bytes:
    """A ``%PDF-`` header followed by pseudo-random bytes."""
    import random

    rng = random.Random(seed)
    return b"%PDF-1.7\n" + bytes(rng.randrange(256) for _ in range(size))


def circular_xref(data: bytes) -> bytes:
    """``data`` plus an update whose two cross-reference sections name each other ``/Prev``."""
    first = len(data)
    section = b"xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 /Root 1 0 R /Prev %010d >>\n"
    second = first + len(section % 0)
    return data + section % second + section % first + b"startxref\n%d\n%%%%EOF\n" % first


def dangling_xref_loop() -> bytes:
    """Only a looping pair of cross-reference sections, and no objects they could lead to."""
    head = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
    return circular_xref(head)


def self_containing_page_tree() -> bytes:
    """A page tree node listing itself and its parent among its kids; an object that is itself."""
    pdf = PdfAssembler()
    catalog = pdf.reserve()
    tree = pdf.reserve()
    loop = pdf.reserve()
    pdf.set(
        loop,
        b"<< /Type /Pages /Kids [%d 0 R %d 0 R] /Count 2 /Parent %d 0 R >>" % (loop, tree, tree),
    )
    pdf.set(tree, b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % loop)
    itself = pdf.reserve()
    pdf.set(itself, b"%d 0 R" % itself)
    pdf.set(catalog, b"<< /Type /Catalog /Pages %d 0 R /Self %d 0 R >>" % (tree, itself))
    return pdf.build(catalog)


def deep_nesting(depth: int = 100_000) -> bytes:
    """A page whose resources hold ``depth`` nested arrays and whose content nests as deep."""
    pdf = PdfAssembler()
    catalog = pdf.reserve()
    tree = pdf.reserve()
    nested = b"[" * depth + b"1" + b"]" * depth
    deep_dict = b"<< /A " * (depth // 10) + b"1" + b" >>" * (depth // 10)
    junk = pdf.add(nested)
    content = pdf.add_stream(b"BT /F1 12 Tf 72 700 Td " + nested + b" TJ (After) Tj ET")
    page = pdf.add(
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
        b"/Resources << /Junk %d 0 R /Deep %s >> >>" % (tree, content, junk, deep_dict)
    )
    pdf.set(tree, b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % page)
    pdf.set(catalog, b"<< /Type /Catalog /Pages %d 0 R >>" % tree)
    return pdf.build(catalog)


def flate_bomb(inflated_bytes: int = 50 * 1024 * 1024, *, text_pages: int = 0) -> bytes:
    """A PDF whose last page's content inflates from ~50 KB to ``inflated_bytes`` of zeros.

    ``text_pages`` ordinary pages ("Page N is fine.") come before it.  The stream is compressed in
    slices so that the test itself never holds the inflated data.
    """
    compressor = zlib.compressobj(9)
    chunk = bytes(1024 * 1024)
    parts = [compressor.compress(b"BT /F1 12 Tf 72 700 Td (Bomb) Tj ET\n")]
    for _ in range(inflated_bytes // len(chunk)):
        parts.append(compressor.compress(chunk))
    parts.append(compressor.flush())
    payload = b"".join(parts)
    pdf = PdfAssembler()
    catalog = pdf.reserve()
    tree = pdf.reserve()
    font = pdf.add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    streams = [pdf.add_stream(content_stream([f"Page {n} is fine."])) for n in range(1, text_pages + 1)]
    streams.append(pdf.add(b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(payload), payload)))
    kids = [
        pdf.add(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (tree, content, font)
        )
        for content in streams
    ]
    refs = b" ".join(b"%d 0 R" % k for k in kids)
    pdf.set(tree, b"<< /Type /Pages /Kids [%s] /Count %d >>" % (refs, len(kids)))
    pdf.set(catalog, b"<< /Type /Catalog /Pages %d 0 R >>" % tree)
    return pdf.build(catalog)


#: Row labels of :func:`statement_pdf`'s table, each with a word found nowhere else ("quillwort" first, "zephyrine"
#: last), so a test can search one row.
STATEMENT_ROWS = (
    "Quillwort harvest receipts",
    "Depreciation and amortization",
    "Pension contributions",
    "Stock-based compensation expense",
    "Gain on sale of businesses",
    "Deferred income taxes",
    "Accounts receivable",
    "Inventories",
    "Accounts payable",
    "Accrued income taxes",
    "Other operating items",
    "Purchases of property, plant and equipment",
    "Proceeds from sale of equipment",
    "Acquisitions, net of cash acquired",
    "Purchases of marketable securities",
    "Proceeds from maturities of securities",
    "Proceeds from sale of businesses",
    "Other investing items",
    "Change in short-term debt",
    "Repayment of long-term debt",
    "Proceeds from long-term debt",
    "Purchases of treasury stock",
    "Proceeds from issuance of treasury stock",
    "Dividends paid to shareholders",
    "Other financing items",
    "Effect of exchange rate changes",
    "Cash at beginning of year",
    "Zephyrine rebates received",
)


def statement_lines(rows: Sequence[str] = STATEMENT_ROWS) -> list[str]:
    """A page holding a paragraph, then a cash-flow statement — a caption of three lines, a row of column years,
    one row of three figures per label — and a closing sentence.  The statement is longer than a span."""
    lines = [
        "The harbor company reports its cash flows below, as every year since its founding.",
        "Harbor Company and Subsidiaries",
        "Consolidated Statement of Cash Flows",
        "Years ended December 31",
        "(Millions) 2018 2017 2016",
    ]
    for k, label in enumerate(rows):
        lines.append(f"{label} {1000 + 37 * k:,} ({200 + 11 * k:,}) {3000 + 7 * k:,}")
    lines.append("The accompanying notes are an integral part of this statement.")
    return lines


def statement_pdf(rows: Sequence[str] = STATEMENT_ROWS) -> bytes:
    """:func:`statement_lines` as a one-page PDF."""
    return text_pdf([statement_lines(rows)])
