"""A deterministic document corpus for benchmarks: Markdown notes and multi-page PDFs with headings.

    python -m bench.doc_corpus --out DIR [--markdown 50] [--pdf 20] [--pages 10] [--seed 7]
                               [--measure]

Writes ``DIR/markdown/note-NNN.md``, ``DIR/pdf/report-NNN.pdf`` and ``DIR/manifest.json`` (each
file's title, headings with levels, page count and whether it has an outline), identical for
identical arguments.  The prose is made of invented sentences; the structure is what the parsers
care about: Markdown with front matter, ATX and setext headings, lists, tables, code, links and
emphasis; PDFs in Helvetica with numbered headings at larger sizes, body text wrapped over
several pages and a running footer, every second one with an outline (bookmarks).

``--measure`` then parses the corpus with the built-in parsers and prints throughput (MB/s for
Markdown, pages/s for PDF) and how many of the PDF headings became sections.  Throughput is per
CPU second of this process (``time.process_time``), so that other work on a shared machine does
not distort it.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import sys
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

_VOCABULARY = (
    "harbor ledger quarter signal meadow copper lantern orbit bridge canvas timber valley",
    "engine parcel market winter summit garden archive beacon compass forest island",
    "harvest journal kettle library mountain needle ocean pepper quartz river saddle",
    "thunder umbrella velvet window yellow zephyr anchor basket candle dragon ember",
    "feather glacier hammer ivory jigsaw kernel lemon marble nectar oyster pillow quiver",
    "ribbon spiral tunnel measured reviewed planned shipped observed recorded adjusted",
    "noted compared tracked quickly carefully rarely often usually slowly steadily quietly",
)
_WORDS = tuple(word for line in _VOCABULARY for word in line.split())
_CONNECTORS = ("the", "a", "of", "and", "with", "for", "in", "after", "before", "during")
_PAGE_HEIGHT = 792
_BODY_SIZE = 10.0
_LINE_CHARS = 95
_LINES_PER_PAGE = 40


@dataclass(slots=True)
class FileEntry:
    """One generated file as recorded in the manifest."""

    path: str
    title: str
    headings: list[tuple[int, str]] = field(default_factory=list)
    pages: int = 0
    outline: bool = False


# -- prose -----------------------------------------------------------------------------------------
def _phrase(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS).capitalize() for _ in range(words))


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) if rng.random() < 0.75 else rng.choice(_CONNECTORS) for _ in range(rng.randint(8, 20))]
    return " ".join(words).capitalize() + rng.choice((".", ".", ".", "?", "!"))


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(3, 6)))


# -- Markdown --------------------------------------------------------------------------------------
def markdown_note(rng: random.Random) -> tuple[str, str, list[tuple[int, str]]]:
    """``(source, title, headings)`` of one note."""
    title = _phrase(rng, 3)
    headings: list[tuple[int, str]] = [(1, title)]
    tags = ", ".join(sorted({rng.choice(_WORDS) for _ in range(3)}))
    out = [
        "---",
        f'title: "{title}"',
        f"date: 2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        f"tags: [{tags}]",
        "---",
        "",
        f"# {title}",
        "",
        _paragraph(rng),
        "",
    ]
    for _ in range(rng.randint(3, 6)):
        heading = _phrase(rng, 2)
        headings.append((2, heading))
        if rng.random() < 0.3:
            out += [heading, "-" * len(heading), ""]
        else:
            out += [f"## {heading}", ""]
        for _ in range(rng.randint(1, 3)):
            out += [_inline_markup(rng, _paragraph(rng)), ""]
        if rng.random() < 0.5:
            out += [f"- {_sentence(rng)}" for _ in range(rng.randint(2, 5))] + [""]
        if rng.random() < 0.3:
            sub = _phrase(rng, 3)
            headings.append((3, sub))
            out += [f"### {sub}", "", _paragraph(rng), ""]
        if rng.random() < 0.25:
            out += ["```python", f"def {rng.choice(_WORDS)}():", "    return 42", "```", ""]
        if rng.random() < 0.25:
            out += ["| Item | Count |", "|------|-------|"]
            out += [f"| {rng.choice(_WORDS)} | {rng.randint(1, 99)} |" for _ in range(3)] + [""]
    return "\n".join(out), title, headings


def _inline_markup(rng: random.Random, paragraph: str) -> str:
    words = paragraph.split(" ")
    for _ in range(3):
        i = rng.randrange(len(words))
        words[i] = rng.choice((f"*{words[i]}*", f"**{words[i]}**", f"[{words[i]}](https://example.org/{i})"))
    return " ".join(words)


# -- PDF -------------------------------------------------------------------------------------------
def pdf_report(rng: random.Random, pages: int) -> tuple[list[list[tuple[float, str]]], str, list[tuple[int, str, int]]]:
    """``(pages of (size, line), title, headings as (level, text, 0-based page))``."""
    title = _phrase(rng, 3)
    lines: list[tuple[float, str]] = [(20.0, title)]
    budget = pages * _LINES_PER_PAGE - 1
    headings: list[tuple[int, str, int]] = []
    chapter = 0
    while budget > 0:
        chapter += 1
        heading = f"{chapter} {_phrase(rng, 2)}"
        lines.append((16.0, heading))
        for section in range(1, rng.randint(2, 4)):
            if rng.random() < 0.6:
                lines.append((13.0, f"{chapter}.{section} {_phrase(rng, 3)}"))
            for _ in range(rng.randint(1, 3)):
                lines += [(_BODY_SIZE, row) for row in _wrap(_paragraph(rng))]
        budget = pages * _LINES_PER_PAGE - len(lines)
    laid_out: list[list[tuple[float, str]]] = []
    for index in range(pages):
        chunk = lines[index * _LINES_PER_PAGE : (index + 1) * _LINES_PER_PAGE]
        laid_out.append([*chunk, (8.0, f"{title} · {index + 1}")])
        for size, text in chunk:
            if size > _BODY_SIZE and size < 20.0:
                number = text.split(" ", 1)[0]
                headings.append((number.count(".") + 1, text, index))
    return laid_out, title, headings


def _wrap(paragraph: str) -> list[str]:
    rows: list[str] = []
    current = ""
    for word in paragraph.split():
        if current and len(current) + 1 + len(word) > _LINE_CHARS:
            rows.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        rows.append(current)
    return rows


def _pdf_string(text: str) -> bytes:
    raw = text.encode("cp1252")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def pdf_bytes(pages: list[list[tuple[float, str]]], *, title: str, outline: list[tuple[int, str, int]] | None) -> bytes:
    """A PDF of Helvetica text lines, one Flate-compressed content stream per page."""
    objects: list[bytes] = [b"", b""]  # 1: catalog, 2: page tree (filled in at the end)
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    page_refs: list[int] = []
    for lines in pages:
        ops = [b"BT"]
        y = _PAGE_HEIGHT - 60.0
        for size, text in lines:
            y -= size * 1.5
            ops.append(b"/F1 %.1f Tf 1 0 0 1 60 %.1f Tm %s Tj" % (size, max(y, 20.0), _pdf_string(text)))
        ops.append(b"ET")
        data = zlib.compress(b"\n".join(ops))
        objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(data), data))
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>" % (len(objects))
        )
        page_refs.append(len(objects))
    kids = b" ".join(b"%d 0 R" % ref for ref in page_refs)
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_refs))
    outline_ref = _add_outline(objects, outline, page_refs) if outline else None
    extra = b" /Outlines %d 0 R /PageMode /UseOutlines" % outline_ref if outline_ref else b""
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R%s >>" % extra
    objects.append(b"<< /Title %s /Producer (cairn bench.doc_corpus) >>" % _pdf_string(title))
    return _serialise(objects, info=len(objects))


def _add_outline(objects: list[bytes], headings: list[tuple[int, str, int]], page_refs: list[int]) -> int:
    """Outline items for level-1 headings with their level-2 headings as children."""
    root = len(objects) + 1
    objects.append(b"")
    tree: list[tuple[tuple[int, str, int], list[tuple[int, str, int]]]] = []
    for heading in headings:
        if heading[0] == 1 or not tree:
            tree.append((heading, []))
        elif heading[0] == 2:
            tree[-1][1].append(heading)
    first_ref = len(objects) + 1
    refs = _outline_level(objects, [t[0] for t in tree], root, page_refs, [t[1] for t in tree])
    objects[root - 1] = b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (
        first_ref,
        refs[-1],
        len(refs),
    )
    return root


def _outline_level(
    objects: list[bytes],
    items: list[tuple[int, str, int]],
    parent: int,
    page_refs: list[int],
    children: list[list[tuple[int, str, int]]],
) -> list[int]:
    base = len(objects) + 1
    refs = [base + i for i in range(len(items))]
    objects.extend(b"" for _ in items)
    for i, (_, text, page) in enumerate(items):
        links = b" /Parent %d 0 R" % parent
        if i:
            links += b" /Prev %d 0 R" % refs[i - 1]
        if i + 1 < len(refs):
            links += b" /Next %d 0 R" % refs[i + 1]
        kids = children[i]
        if kids:
            kid_refs = _outline_level(objects, kids, refs[i], page_refs, [[] for _ in kids])
            links += b" /First %d 0 R /Last %d 0 R /Count %d" % (
                kid_refs[0],
                kid_refs[-1],
                len(kid_refs),
            )
        dest = b"[%d 0 R /XYZ 0 792 0]" % page_refs[page]
        objects[refs[i] - 1] = b"<< /Title %s%s /Dest %s >>" % (_pdf_string(text), links, dest)
    return refs


def _serialise(objects: list[bytes], *, info: int) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.writelines(b"%010d 00000 n \n" % offset for offset in offsets)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info, xref)
    )
    return out.getvalue()


# -- the corpus ------------------------------------------------------------------------------------
def generate(out: Path, *, markdown: int, pdf: int, pages: int, seed: int) -> list[FileEntry]:
    """Write the corpus under ``out`` and its manifest; return the manifest entries."""
    entries: list[FileEntry] = []
    (out / "markdown").mkdir(parents=True, exist_ok=True)
    (out / "pdf").mkdir(parents=True, exist_ok=True)
    for i in range(markdown):
        source, title, headings = markdown_note(random.Random(f"{seed}-markdown-{i}"))
        path = f"markdown/note-{i:03d}.md"
        (out / path).write_text(source, encoding="utf-8")
        entries.append(FileEntry(path, title, headings))
    for i in range(pdf):
        laid_out, title, placed = pdf_report(random.Random(f"{seed}-pdf-{i}"), pages)
        with_outline = i % 2 == 1
        path = f"pdf/report-{i:03d}.pdf"
        data = pdf_bytes(laid_out, title=title, outline=placed if with_outline else None)
        (out / path).write_bytes(data)
        entries.append(FileEntry(path, title, [(lvl, text) for lvl, text, _ in placed], pages, with_outline))
    manifest = {"seed": seed, "files": [asdict(e) for e in entries]}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return entries


def measure(out: Path, entries: list[FileEntry]) -> dict[str, float]:
    """Parse the corpus with the built-in parsers; throughput and PDF heading recall."""
    from engine.plugin_api import ParseLimits
    from plugins.parsers import MarkdownParser, PdfParser

    limits = ParseLimits()
    # Warm up: the first parse of each kind imports markdown-it or pypdf, which is start-up cost,
    # not parsing speed.
    for entry in {e.path.rsplit(".", 1)[-1]: e for e in entries}.values():
        parser = MarkdownParser() if entry.path.endswith(".md") else PdfParser()
        parser.parse((out / entry.path).read_bytes(), name=entry.path, limits=limits)
    md_bytes, md_seconds, pdf_pages, pdf_seconds = 0, 0.0, 0, 0.0
    expected, found = 0, 0
    for entry in entries:
        data = (out / entry.path).read_bytes()
        started = time.process_time()
        if entry.path.endswith(".md"):
            MarkdownParser().parse(data, name=entry.path, limits=limits)
            md_bytes += len(data)
            md_seconds += time.process_time() - started
            continue
        doc = PdfParser().parse(data, name=entry.path, limits=limits)
        pdf_seconds += time.process_time() - started
        pdf_pages += len(doc.pages)
        titles = {s.title for s in doc.sections}
        expected += len(entry.headings)
        found += sum(1 for _, text in entry.headings if text in titles)
    return {
        "markdown_mb_per_s": md_bytes / 1e6 / md_seconds if md_seconds else 0.0,
        "markdown_mb": md_bytes / 1e6,
        "pdf_pages_per_s": pdf_pages / pdf_seconds if pdf_seconds else 0.0,
        "pdf_pages": float(pdf_pages),
        "pdf_heading_recall": found / expected if expected else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.doc_corpus", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write the corpus into")
    parser.add_argument("--markdown", type=int, default=50, help="number of Markdown files")
    parser.add_argument("--pdf", type=int, default=20, help="number of PDF files")
    parser.add_argument("--pages", type=int, default=10, help="pages per PDF")
    parser.add_argument("--seed", type=int, default=7, help="seed: same seed, same bytes")
    parser.add_argument("--measure", action="store_true", help="parse the corpus and print speeds")
    args = parser.parse_args(argv)
    if min(args.markdown, args.pdf) < 0 or args.pages < 1:
        parser.error("counts must be >= 0 and --pages >= 1")
    entries = generate(args.out, markdown=args.markdown, pdf=args.pdf, pages=args.pages, seed=args.seed)
    print(f"wrote {args.markdown} Markdown and {args.pdf} PDFs of {args.pages} pages to {args.out}")
    if args.measure:
        for key, value in measure(args.out, entries).items():
            print(f"{key:>20}: {value:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
