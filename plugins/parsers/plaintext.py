"""The plain-text parser (``.txt``, ``.text``, ``.log``): decoding, tidying, and finding sections.

Text is kept as written — line breaks and indentation included — except that line endings become
``\\n``, control characters and trailing spaces go, and runs of blank lines shrink to one.  Sections
come from heading-like lines when the file has them: a short line underlined with ``===`` (level
1) or ``---`` (level 2), whose underline is dropped from the text, or a numbered line standing
alone between blank lines ("2.1 Results", level = depth of the number).  Otherwise paragraphs are
grouped into sections of about 2,000 characters.

CSV and TSV are not claimed: as prose, rows lose their column names, and a tabular parser would
do them justice.
"""

from __future__ import annotations

import re

from engine.plugin_api import ParsedDocument, ParseLimits
from plugins.parsers.assembly import Heading, heading_title, title_from_name
from plugins.parsers.decoding import decode, normalise_newlines, strip_controls
from plugins.parsers.headings import MAX_HEADING_CHARS, numbered_level
from plugins.parsers.limits import check_bytes, check_chars
from plugins.parsers.sectioning import paragraph_sections, sections_from_headings

_UNDERLINE = re.compile(r"[ \t]{0,3}(=+|-+)[ \t]*")
_BULLET = re.compile(r"\s*[-*+•]\s")


class PlainTextParser:
    """Plain text in any common encoding; never refuses bytes it is given (within the limits)."""

    name: str = "text"
    version: str = "1"
    extensions: tuple[str, ...] = (".txt", ".text", ".log")
    mime_types: tuple[str, ...] = ("text/plain",)

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        """Decode ``data`` and find its sections (see the module docstring)."""
        check_bytes(data, limits)
        decoded = decode(data)
        lines = [line.rstrip() for line in strip_controls(normalise_newlines(decoded.text)).split("\n")]
        text, headings = _assemble(lines, limits)
        sections = sections_from_headings(text, headings) or paragraph_sections(text)
        title = headings[0].title if headings and headings[0].start == 0 else title_from_name(name)
        return ParsedDocument(
            text=text,
            sections=sections,
            title=title,
            metadata={"encoding": decoded.encoding},
            warnings=decoded.warnings,
        )


def _assemble(lines: list[str], limits: ParseLimits) -> tuple[str, list[Heading]]:
    """The tidied text and its headings, in one pass over the lines."""
    out: list[str] = []
    length = 0
    headings: list[Heading] = []
    blank_before = True
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            blank_before = True
            i += 1
            continue
        level, consumed = _heading_at(lines, i) if blank_before else (None, 1)
        if out:
            separator = "\n\n" if blank_before else "\n"
            out.append(separator)
            length += len(separator)
        if level is not None:
            headings.append(Heading(length, heading_title(line), level))
        out.append(line)
        length += len(line)
        check_chars(length, limits)
        blank_before = False
        i += consumed
    return "".join(out), headings


def _heading_at(lines: list[str], i: int) -> tuple[int | None, int]:
    """``(level, lines consumed)`` for a heading starting a paragraph at line ``i``."""
    line = lines[i]
    following = lines[i + 1] if i + 1 < len(lines) else ""
    if len(line.strip()) <= MAX_HEADING_CHARS and not _BULLET.match(line):
        underline = _UNDERLINE.fullmatch(following)
        if underline is not None and len(underline.group(1)) >= 3 and not _UNDERLINE.fullmatch(line):
            return (1 if underline.group(1)[0] == "=" else 2), 2
    if not following.strip():
        return numbered_level(line), 1
    return None, 1
